package pgserver_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/pgserver"
)

// startCluster brings up a private cluster in home and stops it (and
// removes a socket folder that fell back to /tmp) when the test ends.
func startCluster(t *testing.T, home string) *pgserver.Server {
	t.Helper()
	s := pgserver.New(home)
	cleanup(t, s)
	if err := s.Up(context.Background()); err != nil {
		t.Fatalf("Up: %v", err)
	}
	return s
}

func cleanup(t *testing.T, s *pgserver.Server) {
	t.Cleanup(func() {
		if err := s.Down(context.Background()); err != nil {
			t.Errorf("Down: %v", err)
		}
		if sock := s.SocketDir(); !strings.HasPrefix(sock, s.Home+string(filepath.Separator)) {
			os.RemoveAll(sock)
		}
	})
}

// withoutPassword is dsn with its password file swapped for an empty one,
// and no PGPASSWORD/PGPASSFILE from the environment either.
func withoutPassword(t *testing.T, dsn string) string {
	t.Helper()
	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGPASSFILE", "/dev/null")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("passfile", "/dev/null")
	u.RawQuery = q.Encode()
	return u.String()
}

func connectOK(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v, want success", dsn, err)
	}
	defer conn.Close(ctx)
	var who string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&who); err != nil || who != pgserver.SuperUser {
		t.Fatalf("current_user over %s = %q, %v; want %q", dsn, who, err, pgserver.SuperUser)
	}
}

// connectRefused wants the server to turn dsn away for want of a password:
// SQLSTATE 28P01 (password authentication failed) or 28000 (no pg_hba.conf
// entry).
func connectRefused(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		conn.Close(ctx)
		t.Fatalf("connect %s without a password succeeded, want an authentication error", dsn)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || (pgErr.Code != "28P01" && pgErr.Code != "28000") {
		t.Fatalf("connect %s without a password: %v, want SQLSTATE 28P01 or 28000", dsn, err)
	}
}

func hbaRules(t *testing.T, dataDir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if f := strings.Fields(line); len(f) > 0 {
			rules = append(rules, strings.Join(f, " "))
		}
	}
	return rules
}

func readSecret(t *testing.T, s *pgserver.Server) string {
	t.Helper()
	b, err := os.ReadFile(s.PassFile())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	prefix := "*:*:*:" + pgserver.SuperUser + ":"
	if !strings.HasPrefix(line, prefix) || len(line) != len(prefix)+64 || strings.Contains(line, "\n") {
		t.Fatalf("%s = %q, want one line %s<64 hex digits>", s.PassFile(), line, prefix)
	}
	return line[len(prefix):]
}

// checkPasswordOnly wants every way in to need the password: pgx over the
// socket and the port without it fails, with URL/TCPURL (passfile) works,
// the URLs do not hold the secret, the password file is 0600 and ours, and
// pg_hba.conf is exactly the three SCRAM rules.
func checkPasswordOnly(t *testing.T, s *pgserver.Server) {
	t.Helper()
	secret := readSecret(t, s)
	st, err := os.Stat(s.PassFile())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode = %v, want 0600", s.PassFile(), st.Mode().Perm())
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Geteuid() {
		t.Fatalf("%s owner uid = %d, want %d (the invoking user)", s.PassFile(), uid, os.Geteuid())
	}
	st2, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"local all all scram-sha-256",
		"host all all 127.0.0.1/32 scram-sha-256",
		"host all all ::1/128 scram-sha-256",
	}
	if got := hbaRules(t, st2.DataDir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pg_hba.conf rules = %q, want %q", got, want)
	}
	for _, dsn := range []string{s.URL("postgres"), s.TCPURL("postgres")} {
		if strings.Contains(dsn, secret) {
			t.Fatalf("%s holds the password", dsn)
		}
		if !strings.Contains(dsn, "passfile="+url.QueryEscape(s.PassFile())) {
			t.Fatalf("%s does not name the password file %s", dsn, s.PassFile())
		}
		connectRefused(t, withoutPassword(t, dsn))
		connectOK(t, dsn)
	}
}

func TestFreshClusterNeedsPassword(t *testing.T) {
	s := startCluster(t, t.TempDir())
	checkPasswordOnly(t, s)
	if left, _ := filepath.Glob(filepath.Join(s.Home, "pg", ".pwfile*")); len(left) > 0 {
		t.Fatalf("initdb's password file was left behind: %v", left)
	}

	// psql (libpq) reads the passfile parameter too; -w: never prompt.
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Log("psql not installed: libpq not checked")
		return
	}
	for _, dsn := range []string{s.URL("postgres"), s.TCPURL("postgres")} {
		out, err := exec.Command(psql, "-w", "-Atc", "SELECT current_user", dsn).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != pgserver.SuperUser {
			t.Fatalf("psql %s: %v: %s; want %s", dsn, err, out, pgserver.SuperUser)
		}
		out, err = exec.Command(psql, "-w", "-Atc", "SELECT 1", withoutPassword(t, dsn)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "password") {
			t.Fatalf("psql without a password: %v: %s; want a password error", err, out)
		}
	}
}

// makeTrust turns s back into what older versions made: pg_hba.conf trusts
// everyone, the role has no password, there is no password file.
func makeTrust(t *testing.T, s *pgserver.Server) {
	t.Helper()
	ctx := context.Background()
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	trust := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
	if err := os.WriteFile(filepath.Join(st.DataDir, "pg_hba.conf"), []byte(trust), 0o600); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ALTER ROLE galewatch PASSWORD NULL", "SELECT pg_reload_conf()"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)
	if err := os.Remove(s.PassFile()); err != nil {
		t.Fatal(err)
	}
	// The precondition: TCP without a password now works.
	noPass := withoutPassword(t, s.TCPURL("postgres"))
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err := pgx.Connect(ctx, noPass)
		if err == nil {
			conn.Close(ctx)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("trust cluster: connect without a password: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUpSwitchesTrustClusterToPassword(t *testing.T) {
	s := startCluster(t, t.TempDir())
	ctx := context.Background()

	// A running trust cluster: Up switches it in place.
	makeTrust(t, s)
	if err := s.Up(ctx); err != nil {
		t.Fatalf("Up on a running trust cluster: %v", err)
	}
	checkPasswordOnly(t, s)
	secret := readSecret(t, s)
	if err := s.Up(ctx); err != nil {
		t.Fatalf("Up after the switch: %v", err)
	}
	if again := readSecret(t, s); again != secret {
		t.Fatal("a second Up changed the password, want it switched once")
	}

	// A stopped trust cluster, two processes' worth of Up at once.
	makeTrust(t, s)
	if err := s.Down(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = pgserver.New(s.Home).Up(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Up %d on a stopped trust cluster: %v", i, err)
		}
	}
	checkPasswordOnly(t, s)
}

func TestUpRefusesForeignSocketDir(t *testing.T) {
	// A deep folder makes the socket fall back to /tmp/galewatch-<hash>,
	// which anyone could have created first.
	home := filepath.Join(t.TempDir(), strings.Repeat("deep", 20))
	s := pgserver.New(home)
	cleanup(t, s)
	sock := s.SocketDir()
	if !strings.HasPrefix(sock, "/tmp/galewatch-") {
		t.Fatalf("SocketDir() = %s, want the /tmp fallback for a %d-byte home", sock, len(home))
	}
	os.RemoveAll(sock)
	ctx := context.Background()
	refused := func(what string) {
		t.Helper()
		err := s.Up(ctx)
		if err == nil || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "remove it") {
			t.Fatalf("Up with a socket folder that %s: %v; want a refusal naming %s", what, err, sock)
		}
		t.Logf("socket folder that %s: %v", what, err)
	}

	if err := os.Symlink(t.TempDir(), sock); err != nil {
		t.Fatal(err)
	}
	refused("is a symlink")
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running {
		t.Fatal("the cluster started despite the refusal")
	}
	fi, err := os.Stat(st.DataDir) // made by the Up above: owned by the cluster owner
	if err != nil {
		t.Fatal(err)
	}
	ownerUID := int(fi.Sys().(*syscall.Stat_t).Uid)

	if os.Geteuid() == 0 {
		os.Remove(sock)
		if err := os.Mkdir(sock, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(sock, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		refused("belongs to nobody")
	} else {
		t.Log("not root: cannot give the folder to another user, that case is not checked")
	}

	os.RemoveAll(sock)
	if err := os.Mkdir(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sock, ownerUID, -1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	refused("anyone can write to")

	// Removed, as the message says: Up makes it afresh and starts.
	os.RemoveAll(sock)
	if err := s.Up(ctx); err != nil {
		t.Fatalf("Up after removing the socket folder: %v", err)
	}
	li, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if !li.IsDir() || li.Mode().Perm() != 0o700 || int(li.Sys().(*syscall.Stat_t).Uid) != ownerUID {
		t.Fatalf("socket folder made by Up: mode %v uid %d, want a 0700 folder of uid %d", li.Mode(), li.Sys().(*syscall.Stat_t).Uid, ownerUID)
	}
	connectOK(t, s.URL("postgres"))
}
