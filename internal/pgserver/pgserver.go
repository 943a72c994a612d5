// Package pgserver runs the embedded default Postgres: a private cluster in a
// project-local folder, started from the server binaries installed on the
// machine, listening on a unix socket and a loopback port. It is what the
// orchestrator uses when DATABASE_URL is not set, and what the tests use.
//
// Every connection, over the socket or the port, needs the superuser's
// password (SCRAM): anyone on the machine can reach 127.0.0.1, and the
// superuser can run programs as the server's OS user. The password is made
// at initdb and kept in a libpq password file (PassFile, mode 0600, owned by
// the user running the orchestrator); URL and TCPURL name that file with the
// passfile parameter, so the secret is never in a connection string, a
// process list or a log. A cluster made by an older version with trust
// authentication is switched to a password by the next Up.
//
// Everything here is idempotent: Up on a running cluster returns its URL,
// and two processes calling Up at once are serialised by a file lock.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// SuperUser is the cluster's bootstrap role. It logs in with the password in
// PassFile, on the unix socket and the loopback port alike.
const SuperUser = "galewatch"

// Server is one embedded cluster rooted at Home.
type Server struct {
	// Home is the project-local folder (default ./.galewatch) holding the
	// data directory, socket, log and port file.
	Home string
	// BinDir holds initdb, pg_ctl and postgres; found automatically if empty.
	BinDir string
	// RunAs is the unprivileged OS user the server runs as when we are root.
	RunAs string
	// Settings are postgresql.conf lines written at initdb after the
	// defaults (a later line wins); Named servers get SmallSettings.
	Settings []string
}

// New returns the cluster rooted at home, with binaries and user resolved
// from the environment (PG_BINDIR, GALEWATCH_PG_USER).
func New(home string) *Server {
	abs, err := filepath.Abs(home)
	if err == nil {
		home = abs
	}
	return &Server{Home: home, BinDir: os.Getenv("PG_BINDIR"), RunAs: os.Getenv("GALEWATCH_PG_USER")}
}

func (s *Server) dataDir() string  { return filepath.Join(s.Home, "pg", "data") }
func (s *Server) logFile() string  { return filepath.Join(s.Home, "pg", "log", "postgres.log") }
func (s *Server) portFile() string { return filepath.Join(s.Home, "pg", "port") }

// SocketDir is where the server's unix socket lives. Unix socket paths are
// limited to ~107 bytes, so a deep project folder falls back to /tmp.
func (s *Server) SocketDir() string {
	dir := filepath.Join(s.Home, "pg", "run")
	if len(dir) > 80 {
		h := fnv32(dir)
		return fmt.Sprintf("/tmp/galewatch-%08x", h)
	}
	return dir
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// ErrNoBinaries means no Postgres server binaries were found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found (looked in $PG_BINDIR, `pg_config --bindir`, /usr/lib/postgresql/*/bin): install them with `apt-get install postgresql` or set DATABASE_URL to an existing server")

// FindBinDir locates a directory holding initdb, pg_ctl and postgres.
func FindBinDir(explicit string) (string, error) {
	var candidates []string
	if explicit != "" {
		candidates = append(candidates, explicit)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	globbed, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(globbed, func(i, j int) bool { return pgMajor(globbed[i]) > pgMajor(globbed[j]) })
	candidates = append(candidates, globbed...)
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasServerBinaries(dir string) bool {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// Port returns the cluster's TCP port, or 0 if the cluster was never created.
func (s *Server) Port() int {
	b, err := os.ReadFile(s.portFile())
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// URL is the connection string of database db on this cluster (over the
// unix socket). It names the password file (passfile=), not the password;
// pgx and libpq (psql) both read it.
func (s *Server) URL(db string) string {
	q := url.Values{}
	q.Set("host", s.SocketDir())
	q.Set("port", strconv.Itoa(s.Port()))
	q.Set("sslmode", "disable")
	q.Set("passfile", s.PassFile())
	return (&url.URL{Scheme: "postgres", User: url.User(SuperUser), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// TCPURL is the same database over the loopback port, for tools that prefer TCP.
func (s *Server) TCPURL(db string) string {
	q := url.Values{}
	q.Set("sslmode", "disable")
	q.Set("passfile", s.PassFile())
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
	return (&url.URL{Scheme: "postgres", User: url.User(SuperUser), Host: host, Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Status reports whether the cluster is initialised and running.
type Status struct {
	Initialised bool
	Running     bool
	Port        int
	DataDir     string
	SocketDir   string
	BinDir      string
	// PassFile is the password file URL names (see Server.PassFile).
	PassFile string
}

// Status inspects the cluster without changing anything.
func (s *Server) Status(ctx context.Context) (Status, error) {
	st := Status{DataDir: s.dataDir(), SocketDir: s.SocketDir(), Port: s.Port(), PassFile: s.PassFile()}
	bin, err := FindBinDir(s.BinDir)
	if err != nil {
		return st, err
	}
	st.BinDir = bin
	if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); err == nil {
		st.Initialised = true
	}
	if st.Initialised {
		st.Running = s.pgCtl(ctx, bin, "status", "-D", s.dataDir()).Run() == nil
	}
	return st, nil
}

// Up initialises the cluster if needed and starts it if it is not running.
// It returns once the server accepts connections. A cluster still using
// trust authentication (made by an older version), or whose password file is
// gone, gets a new password first; all of it happens under the file lock, so
// concurrent Ups are fine.
func (s *Server) Up(ctx context.Context) error {
	bin, err := FindBinDir(s.BinDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", s.Home, err)
	}
	unlock, err := lockFile(filepath.Join(s.Home, "pg.lock"))
	if err != nil {
		return err
	}
	defer unlock()

	owner, err := s.owner()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := s.initdb(ctx, bin, owner); err != nil {
			return err
		}
	}
	// The socket folder may be in /tmp (see SocketDir): it must be ours.
	for _, dir := range []string{s.SocketDir(), filepath.Dir(s.logFile())} {
		if err := ensureOwnedDir(dir, owner); err != nil {
			return err
		}
	}
	switching, err := s.needsPassword()
	if err != nil {
		return err
	}
	running := s.pgCtl(ctx, bin, "status", "-D", s.dataDir()).Run() == nil
	if switching {
		if err := s.beginPasswordSwitch(ctx, bin, owner, running); err != nil {
			return err
		}
	}
	if !running {
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", s.Port(), s.SocketDir())
		cmd := s.pgCtl(ctx, bin, "start", "-D", s.dataDir(), "-l", s.logFile(), "-w", "-t", "60", "-o", opts)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("start postgres: %v: %s (log: %s)", err, strings.TrimSpace(string(out)), s.logFile())
		}
	}
	if switching {
		return s.finishPasswordSwitch(ctx, bin, owner)
	}
	return nil
}

// Down stops the cluster (fast shutdown). Stopping a stopped cluster is not an error.
func (s *Server) Down(ctx context.Context) error { return s.stop(ctx, "fast") }

// Abandon stops the cluster without its shutdown checkpoint (immediate
// mode: the next start would recover from WAL), for a cluster about to be
// removed: a fast shutdown wrote up to shared_buffers of dirty pages first
// (make test's cluster: about a minute).
func (s *Server) Abandon(ctx context.Context) error { return s.stop(ctx, "immediate") }

func (s *Server) stop(ctx context.Context, mode string) error {
	st, err := s.Status(ctx)
	if err != nil || !st.Running {
		return err
	}
	out, err := s.pgCtl(ctx, st.BinDir, "stop", "-D", s.dataDir(), "-m", mode, "-w").CombinedOutput()
	if err != nil {
		return fmt.Errorf("stop postgres: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// settings are appended to postgresql.conf at initdb. Sized for a 2-core,
// 24 GiB machine running one control and a few shard databases.
var settings = []string{
	"max_connections = 400",
	"shared_buffers = 2GB",
	"work_mem = 64MB",
	"maintenance_work_mem = 512MB",
	"max_wal_size = 8GB",
	"checkpoint_timeout = 15min",
	"timezone = 'UTC'",
	"log_timezone = 'UTC'",
	"log_min_duration_statement = -1",
	"password_encryption = 'scram-sha-256'",
}

func (s *Server) initdb(ctx context.Context, bin string, owner osUser) error {
	if err := os.MkdirAll(s.dataDir(), 0o700); err != nil {
		return err
	}
	for _, dir := range []string{filepath.Join(s.Home, "pg"), s.dataDir()} {
		if err := owner.chown(dir); err != nil {
			return err
		}
	}
	if err := owner.canReach(s.dataDir()); err != nil {
		return err
	}
	secret, err := newSecret()
	if err != nil {
		return err
	}
	// initdb runs as the cluster owner, so it gets the password in a file
	// only that user can read, removed as soon as initdb is done.
	pwfile, err := writePwFile(filepath.Dir(s.dataDir()), secret, owner)
	if err != nil {
		return fmt.Errorf("initdb: password file: %w", err)
	}
	cmd := s.asOwner(ctx, filepath.Join(bin, "initdb"), "-D", s.dataDir(), "-U", SuperUser,
		"--pwfile="+pwfile, "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C")
	out, err := cmd.CombinedOutput()
	if rerr := os.Remove(pwfile); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := writeFileAtomic(s.hbaFile(), []byte(hbaRules), 0o600, &owner); err != nil {
		return fmt.Errorf("write %s: %w", s.hbaFile(), err)
	}
	conf := filepath.Join(s.dataDir(), "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n# galewatch embedded default\n" + strings.Join(append(slices.Clone(settings), s.Settings...), "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.portFile(), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return err
	}
	// Last: should anything above fail after initdb, the missing password
	// file makes the next Up set a fresh password (see needsPassword).
	return s.writePassFile(secret)
}

func (s *Server) pgCtl(ctx context.Context, bin string, args ...string) *exec.Cmd {
	return s.asOwner(ctx, filepath.Join(bin, "pg_ctl"), args...)
}

// asOwner runs a server binary as the cluster's owner: directly when we are
// not root, through runuser when we are (Postgres refuses to run as root).
func (s *Server) asOwner(ctx context.Context, name string, args ...string) *exec.Cmd {
	if os.Geteuid() != 0 {
		return exec.CommandContext(ctx, name, args...)
	}
	full := append([]string{"-u", s.runAs(), "--", name}, args...)
	cmd := exec.CommandContext(ctx, "runuser", full...)
	cmd.Dir = "/"
	return cmd
}

func (s *Server) runAs() string {
	if s.RunAs != "" {
		return s.RunAs
	}
	return "postgres"
}

type osUser struct {
	uid, gid int
	name     string
	root     bool
}

// owner resolves who owns the cluster's files. As root that is the
// unprivileged RunAs user (created as a system user if missing).
func (s *Server) owner() (osUser, error) {
	if os.Geteuid() != 0 {
		return osUser{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	name := s.runAs()
	u, err := user.Lookup(name)
	if err != nil {
		if out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); cerr != nil {
			return osUser{}, fmt.Errorf("running as root needs an unprivileged user for postgres: user %q: %v; useradd: %v: %s", name, err, cerr, out)
		}
		if u, err = user.Lookup(name); err != nil {
			return osUser{}, err
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return osUser{uid: uid, gid: gid, name: name, root: true}, nil
}

func (u osUser) chown(path string) error {
	if !u.root {
		return nil
	}
	return os.Chown(path, u.uid, u.gid)
}

// canReach makes sure the unprivileged user can traverse to dir. A fresh
// clone in a 0700 folder (mktemp -d) would otherwise be unreachable; we add
// only the search bit (o+x), never read, and say so.
func (u osUser) canReach(dir string) error {
	if !u.root {
		return nil
	}
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		mode := st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) == u.uid {
			continue
		}
		if mode&0o001 == 0 {
			if err := os.Chmod(p, mode|0o001); err != nil {
				return fmt.Errorf("postgres user %q cannot reach %s: %w", u.name, dir, err)
			}
			fmt.Fprintf(os.Stderr, "pgserver: added o+x to %s so user %q can reach the data folder\n", p, u.name)
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	// Blocks until the other process is done starting the cluster.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
