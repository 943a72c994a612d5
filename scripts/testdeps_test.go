// Package scripts holds the project's shell scripts; this test runs them.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runDeps runs test-deps.sh with chromium hidden (CHROMIUM names a missing
// binary) or present, and apt-get replaced by a stub that records its
// arguments.
func runDeps(t *testing.T, chromiumPresent bool, uid string, args ...string) (out string, code int, aptCalls string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "apt.log")
	apt := filepath.Join(dir, "apt-get")
	if err := os.WriteFile(apt, []byte("#!/bin/sh\necho \"$@\" >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	chromium := filepath.Join(dir, "no-chromium")
	if chromiumPresent {
		chromium = apt // any executable
	}
	cmd := exec.Command("bash", append([]string{"test-deps.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium, "APT_GET="+apt, "TEST_DEPS_UID="+uid, "DATABASE_URL=")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(log)
	return string(b), code, string(calls)
}

func TestTestDepsInstallsWhatIsMissing(t *testing.T) {
	if _, err := exec.LookPath("initdb"); err != nil && !hasPostgres() {
		t.Fatal("this test expects the Postgres server binaries on the machine (make test installs them first)")
	}
	t.Run("NothingMissing", func(t *testing.T) {
		out, code, calls := runDeps(t, true, "0")
		if code != 0 || out != "" || calls != "" {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want 0, silent, no calls", code, out, calls)
		}
	})
	t.Run("RootInstallsChromium", func(t *testing.T) {
		out, code, calls := runDeps(t, false, "0")
		if code != 0 || !strings.Contains(calls, "install -y -q --no-install-recommends chromium") || !strings.Contains(out, "installing chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want chromium installed through apt-get", code, out, calls)
		}
	})
	t.Run("NotRootSaysWhatToInstall", func(t *testing.T) {
		out, code, calls := runDeps(t, false, "1000")
		if code != 1 || calls != "" || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "apt-get install chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 1, one line naming `apt-get install chromium`, no calls", code, out, calls)
		}
	})
	t.Run("CheckOnly", func(t *testing.T) {
		out, code, calls := runDeps(t, false, "0", "--check")
		if code != 1 || calls != "" || !strings.Contains(out, "missing chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 1 saying chromium is missing, no calls", code, out, calls)
		}
	})
}

func hasPostgres() bool {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}
