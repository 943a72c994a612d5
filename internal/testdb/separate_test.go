package testdb_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

// ownedFailure names how TestOwnedServerFailing fails; unset, it is skipped
// (TestOwnedServersStopWhenTheTestFails runs it as a process of its own).
const ownedFailure = "GALEWATCH_OWNED_SERVER_FAILURE"

// TestOwnedServersStopWhenTheTestFails: a test that owns a named server
// (testdb.OwnServers, as the soak owns its five) and fails with the server
// up leaves no postmaster behind, whether it fails by t.Fatal or by a
// panic: after the failed test, its postmaster's process is gone (0 left
// of 1) and its port refuses connections. The failing test runs as a test
// binary of its own: a failing subtest would fail this test too.
func TestOwnedServersStopWhenTheTestFails(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Skip("DATABASE_URL is set: the embedded named servers are not used")
	}
	for _, how := range []string{"fatal", "panic"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOwnedServerFailing$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), ownedFailure+"="+how)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestOwnedServerFailing") {
				t.Fatalf("the failing test (%s) exited %v, want a failure:\n%s", how, err, out)
			}
			m := regexp.MustCompile(`postmaster (\d+) on port (\d+) up`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("the failing test (%s) did not say its postmaster:\n%s", how, out)
			}
			pid, _ := strconv.Atoi(string(m[1]))
			port, _ := strconv.Atoi(string(m[2]))
			left := 0
			if postgresRunning(pid) {
				left++
			}
			conn, dialErr := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
			if dialErr == nil {
				conn.Close()
			}
			if left != 0 || dialErr == nil {
				// Not left running for the next test.
				_ = pgserver.Named(testdb.Home(t), "owned-test").Down(context.Background())
				t.Fatalf("after a test failing by %s: postmaster %d running: %d left of 1; port %d accepts connections: %v (want 0 left, the port closed)",
					how, pid, left, port, dialErr == nil)
			}
		})
	}
}

// TestOwnedServerFailing is the failing test: it owns server owned-test,
// starts it, says its postmaster and port, and fails as
// GALEWATCH_OWNED_SERVER_FAILURE says.
func TestOwnedServerFailing(t *testing.T) {
	how := os.Getenv(ownedFailure)
	if how == "" {
		t.Skip("run by TestOwnedServersStopWhenTheTestFails")
	}
	s := pgserver.Named(testdb.Home(t), "owned-test")
	testdb.OwnServers(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testdb.Must(t, s.Up(ctx), "start owned-test")
	pid, err := s.PostmasterPID()
	testdb.Must(t, err, "postmaster of owned-test")
	fmt.Printf("postmaster %d on port %d up\n", pid, s.Port())
	switch how {
	case "fatal":
		t.Fatal("failing on purpose with the server up")
	case "panic":
		panic("failing on purpose with the server up")
	}
}

// postgresRunning says whether pid is a live postgres process (not gone,
// not a zombie its parent has yet to reap, not another program's reuse).
func postgresRunning(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if lp < 0 || rp < lp || len(s) < rp+3 {
		return false
	}
	return s[lp+1:rp] == "postgres" && s[rp+2] != 'Z'
}
