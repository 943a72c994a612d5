package pgserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// PassFile is the libpq password file holding the superuser's password
// (`*:*:*:galewatch:<hex>`, mode 0600, owned by whoever runs the
// orchestrator). URL and TCPURL point at it with the passfile parameter, so
// the secret itself never appears in a connection string.
func (s *Server) PassFile() string { return filepath.Join(s.Home, "pg", "pgpass") }

func (s *Server) hbaFile() string { return filepath.Join(s.dataDir(), "pg_hba.conf") }

// hbaRules is the whole of pg_hba.conf: a password (SCRAM) for every
// connection, over the socket and the loopback port alike.
const hbaRules = `# galewatch embedded default (internal/pgserver): password (SCRAM) only.
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
`

// hbaUpgrading is pg_hba.conf while an old trust cluster is given a
// password: the unix socket only, whose folder only the cluster owner (and
// root) can enter; the loopback port accepts nobody.
const hbaUpgrading = `# galewatch embedded default: switching to password authentication.
local all all trust
`

func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// writeFileAtomic replaces path with data (mode perm) by a rename, so a
// reader sees the old file or the new one; the new file is chowned to owner
// when owner is set (the server must read pg_hba.conf).
func writeFileAtomic(path string, data []byte, perm os.FileMode, owner *osUser) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if owner != nil {
		if err := owner.chown(tmp); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writePassFile stores secret as the superuser's password in PassFile,
// owned by the invoking user (not the cluster owner) with mode 0600.
func (s *Server) writePassFile(secret string) error {
	line := fmt.Sprintf("*:*:*:%s:%s\n", SuperUser, secret)
	if err := writeFileAtomic(s.PassFile(), []byte(line), 0o600, nil); err != nil {
		return fmt.Errorf("write password file: %w", err)
	}
	return nil
}

// readPassFile returns the superuser's password from PassFile.
func (s *Server) readPassFile() (string, error) {
	b, err := os.ReadFile(s.PassFile())
	if err != nil {
		return "", err
	}
	prefix := "*:*:*:" + SuperUser + ":"
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, prefix) && len(line) > len(prefix) {
			return line[len(prefix):], nil
		}
	}
	return "", fmt.Errorf("%s holds no password for %s", s.PassFile(), SuperUser)
}

// writePwFile writes secret to a file the cluster owner alone can read, for
// initdb --pwfile; the caller removes it.
func writePwFile(dir, secret string, owner osUser) (string, error) {
	f, err := os.CreateTemp(dir, ".pwfile*")
	if err != nil {
		return "", err
	}
	path := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		err = owner.chown(path)
	}
	if err == nil {
		_, err = f.WriteString(secret + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// hbaTrusts reports whether pg_hba.conf lets anyone in without a password.
func (s *Server) hbaTrusts() (bool, error) {
	b, err := os.ReadFile(s.hbaFile())
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			if f == "trust" {
				return true, nil
			}
		}
	}
	return false, nil
}

// needsPassword reports whether an initialised cluster still has to be
// switched to password authentication: it was made with trust by an older
// version (or a switch was interrupted), or its password file is gone.
func (s *Server) needsPassword() (bool, error) {
	if _, err := os.Stat(s.PassFile()); errors.Is(err, os.ErrNotExist) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return s.hbaTrusts()
}

// beginPasswordSwitch is the first half of switching a cluster to password
// authentication, before the server starts (or while it runs): it makes sure
// PassFile holds a secret and narrows pg_hba.conf to trusted socket
// connections only, so that the loopback port never trusts anyone again.
// Every step can be repeated: an interrupted switch is finished by the next Up.
func (s *Server) beginPasswordSwitch(ctx context.Context, bin string, owner osUser, running bool) error {
	if _, err := s.readPassFile(); err != nil {
		secret, err := newSecret()
		if err != nil {
			return err
		}
		if err := s.writePassFile(secret); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(s.hbaFile(), []byte(hbaUpgrading), 0o600, &owner); err != nil {
		return fmt.Errorf("rewrite %s: %w", s.hbaFile(), err)
	}
	if running {
		return s.reload(ctx, bin)
	}
	return nil
}

// finishPasswordSwitch sets the superuser's password to the one in PassFile
// (connecting over the socket, which beginPasswordSwitch left trusted), then
// requires the password everywhere and waits until the server applies that.
func (s *Server) finishPasswordSwitch(ctx context.Context, bin string, owner osUser) error {
	secret, err := s.readPassFile()
	if err != nil {
		return err
	}
	conn, err := s.connectRetrying(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("connect over the socket to set a password: %w", err)
	}
	defer conn.Close(ctx)
	// Keep the statement (it holds the password) out of the server log even
	// if it fails; ALTER ROLE takes no bind parameters, so this is the one
	// other place (besides CREATE/DROP DATABASE) where Go builds SQL text.
	for _, q := range []string{
		"SET log_statement = 'none'",
		"SET log_min_error_statement = 'panic'",
		"SET log_min_duration_statement = -1",
		"SET password_encryption = 'scram-sha-256'",
		"ALTER ROLE " + pgx.Identifier{SuperUser}.Sanitize() + " PASSWORD " + quoteLiteral(secret),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			if strings.HasPrefix(q, "ALTER ROLE") {
				return fmt.Errorf("set the password of role %s: %w", SuperUser, err)
			}
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var loaded time.Time
	if err := conn.QueryRow(ctx, "SELECT pg_conf_load_time()").Scan(&loaded); err != nil {
		return err
	}
	if err := writeFileAtomic(s.hbaFile(), []byte(hbaRules), 0o600, &owner); err != nil {
		return fmt.Errorf("rewrite %s: %w", s.hbaFile(), err)
	}
	if err := s.reload(ctx, bin); err != nil {
		return err
	}
	if err := s.waitReloaded(ctx, loaded); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pgserver: the cluster in %s now requires a password (SCRAM) on the socket and port; it is in %s\n", s.Home, s.PassFile())
	return nil
}

func (s *Server) reload(ctx context.Context, bin string) error {
	if out, err := s.pgCtl(ctx, bin, "reload", "-D", s.dataDir()).CombinedOutput(); err != nil {
		return fmt.Errorf("reload postgres: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitReloaded returns once new connections see a configuration loaded
// after since: pg_ctl reload only signals the server.
func (s *Server) waitReloaded(ctx context.Context, since time.Time) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			var after bool
			err = conn.QueryRow(ctx, "SELECT pg_conf_load_time() > $1", since).Scan(&after)
			conn.Close(ctx)
			if err == nil && after {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not reload %s within 30s (last error: %v; log: %s)", s.hbaFile(), err, s.logFile())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connectRetrying connects to url, retrying for a few seconds while a
// reload the caller just asked for takes effect.
func (s *Server) connectRetrying(ctx context.Context, url string) (*pgx.Conn, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, url)
		if err == nil || time.Now().After(deadline) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// quoteLiteral quotes s as an SQL string literal, as quote_literal does.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// ensureOwnedDir makes sure dir is a real folder owned by the cluster owner
// that nobody else can write to: created with os.Mkdir (which, unlike
// MkdirAll, fails on anything already there, symlinks included) or, if it
// exists, checked without following a symlink. The socket folder may fall
// back to /tmp, where anyone could have made it first.
func ensureOwnedDir(dir string, owner osUser) error {
	err := os.Mkdir(dir, 0o700)
	switch {
	case err == nil:
		if err := owner.chown(dir); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrExist):
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	uid := -1
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		uid = int(sys.Uid)
	}
	var problem string
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		problem = "is a symlink"
	case !st.IsDir():
		problem = "is not a folder"
	case uid != owner.uid:
		problem = fmt.Sprintf("is owned by uid %d, not by the cluster owner (uid %d)", uid, owner.uid)
	case st.Mode().Perm()&0o022 != 0:
		problem = "is writable by group or others"
	default:
		return nil
	}
	return fmt.Errorf("refusing to use %s (owner uid %d, mode %v): it %s; remove it (rm -r %s) and run again, it will be recreated with mode 0700 for uid %d",
		dir, uid, st.Mode(), problem, dir, owner.uid)
}
