package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// testConfig is what the in-process command tests run with: env's control
// database, partitions one day ahead.
// testFleetSince is the --effective-from of a test's first fleet apply:
// its turbines were in service before the readings the test writes (an
// apply on the test's day would put them in service from that day only).
const testFleetSince = "2026-01-01T00:00:00Z"

func testConfig(env *testdb.Env) Config {
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	return cfg
}

// runMain runs one command on m in-process, as the binary would, within 2
// minutes, and closes m.
func runMain(m *Main, args ...string) error {
	defer m.Close()
	cmd := m.Command()
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	return cmd.ExecuteContext(ctx)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds the real orchestrator once per test binary (each
// test building its own spent a link of the whole binary per test: 9 of
// them, seconds of CPU each on a busy machine); TestMain removes it.
func buildBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "galewatch-orchestrator-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "orchestrator")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestRunOnEmbeddedDefault is `make run` from nothing: with no DATABASE_URL
// and an empty home folder, fleet apply starts a private cluster and
// creates 1 control + 4 shard databases, serve answers /healthz, and a
// second round reuses the same cluster.
func TestRunOnEmbeddedDefault(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Log("DATABASE_URL is set: this test is about the embedded default")
		return
	}
	bin := buildBinary(t)
	home := filepath.Join(t.TempDir(), "gw")
	env := append(os.Environ(), "GALEWATCH_HOME="+home)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("orchestrator %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "--home", home, "db", "down").Run() })
	demo := filepath.Join("..", "..", "fleet", "demo.yaml")

	var firstURL string
	for round := 1; round <= 2; round++ {
		out := run("fleet", "apply", demo)
		if !strings.Contains(out, "4 shards, 21 farms, 1240 turbines in the file") {
			t.Fatalf("round %d: fleet apply printed %q", round, out)
		}
		status := run("db", "status")
		if !strings.Contains(status, "running:     true") {
			t.Fatalf("round %d: db status = %q", round, status)
		}
		url := run("db", "url")
		if round == 1 {
			firstURL = url
		} else if url != firstURL {
			t.Fatalf("second round uses %q, first used %q: the cluster was not reused", url, firstURL)
		}

		h := serveHealthz(t, bin, env)
		if h.Status != "ok" || h.Control != "ok" || len(h.Shards) != 4 {
			t.Fatalf("round %d: healthz = %+v, want ok with 4 shards", round, h)
		}
	}
	dbs := run("db", "status")
	if !strings.Contains(dbs, "initialised: true") {
		t.Fatalf("db status = %q", dbs)
	}
}

type healthz struct {
	Status, Control string
	Shards          map[string]string
}

func serveHealthz(t *testing.T, bin string, env []string) healthz {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := startServe(ctx, t, bin, env)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /healthz = %d %s", resp.StatusCode, body)
	}
	var h healthz
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("healthz body %q: %v", body, err)
	}
	return h
}

// startServe runs `orchestrator serve` on a free loopback port until ctx
// ends (extra arguments appended) and returns its base URL.
func startServe(ctx context.Context, t *testing.T, bin string, env []string, extra ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, extra...)...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "serving on "); ok {
				addr <- strings.Fields(after)[0]
			}
		}
		close(addr)
	}()
	select {
	case base, ok := <-addr:
		if !ok {
			t.Fatal("serve exited before printing its address")
		}
		return base
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not print its address within 60s")
	}
	return ""
}

// TestFleetApplyUnknownZone: a bad fleet file exits non-zero (2) and the
// message names the farm and the zone.
func TestFleetApplyUnknownZone(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	file := filepath.Join(t.TempDir(), "bad.yaml")
	err := os.WriteFile(file, []byte("shards:\n  - name: s1\nfarms:\n  - id: ardnave-point\n    name: Ardnave Point\n    timezone: Europe/Ardnave\n    turbines: [{id: AP-001, shard: s1}]\n"), 0o644)
	testdb.Must(t, err, "write fleet file")
	cfg := ConfigFromEnv()
	cfg.DatabaseURL = env.ControlDSN
	m := &Main{Config: cfg, Now: time.Now}
	defer m.Close()
	cmd := m.Command()
	cmd.SetArgs([]string{"fleet", "apply", file})
	err = cmd.ExecuteContext(context.Background())
	if code := exitCode(err); code != 2 {
		t.Fatalf("exit code = %d (err %v), want 2", code, err)
	}
	for _, want := range []string{"ardnave-point", `"Europe/Ardnave"`} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %s", err, want)
		}
	}
}
