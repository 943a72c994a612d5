// Package scripts holds the project's shell scripts; this test runs them.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runDeps runs test-deps.sh with chromium and promtool hidden (CHROMIUM,
// PROMTOOL name a missing binary) or present, apt-get replaced by a stub
// that records its arguments (and whose `download` leaves the deb given
// in its working directory, or fails without one), and promtool's install
// directory a temporary one, returned.
func runDeps(t *testing.T, chromiumPresent, promtoolPresent bool, deb, uid string, args ...string) (out string, code int, aptCalls, promtoolDir string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "apt.log")
	apt := filepath.Join(dir, "apt-get")
	stub := "#!/bin/sh\necho \"$@\" >> " + log + "\n"
	if deb != "" {
		stub += "[ \"$1\" = download ] && cp " + deb + " .\n"
	} else {
		stub += "[ \"$1\" = download ] && exit 100\n" // as apt-get does for a package it does not know
	}
	if err := os.WriteFile(apt, []byte(stub+"exit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	chromium, promtool := filepath.Join(dir, "no-chromium"), filepath.Join(dir, "no-promtool")
	if chromiumPresent {
		chromium = apt // any executable
	}
	if promtoolPresent {
		promtool = apt
	}
	promtoolDir = filepath.Join(dir, "bin")
	if err := os.Mkdir(promtoolDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{"test-deps.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium, "PROMTOOL="+promtool, "PROMTOOL_DIR="+promtoolDir,
		"APT_GET="+apt, "TEST_DEPS_UID="+uid, "DATABASE_URL=")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(log)
	return string(b), code, string(calls), promtoolDir
}

func TestTestDepsInstallsWhatIsMissing(t *testing.T) {
	if _, err := exec.LookPath("initdb"); err != nil && !hasPostgres() {
		t.Fatal("this test expects the Postgres server binaries on the machine (make test installs them first)")
	}
	t.Run("NothingMissing", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, true, true, "", "0")
		if code != 0 || out != "" || calls != "" {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want 0, silent, no calls", code, out, calls)
		}
	})
	t.Run("RootInstallsChromium", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, false, true, "", "0")
		if code != 0 || !strings.Contains(calls, "install -y -q --no-install-recommends chromium") || !strings.Contains(out, "installing chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want chromium installed through apt-get", code, out, calls)
		}
	})
	t.Run("NotRootSaysWhatToInstall", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, false, true, "", "1000")
		if code != 1 || calls != "" || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "apt-get install chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 1, one line naming `apt-get install chromium`, no calls", code, out, calls)
		}
	})
	t.Run("CheckOnly", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, false, true, "", "0", "--check")
		if code != 1 || calls != "" || !strings.Contains(out, "missing chromium") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 1 saying chromium is missing, no calls", code, out, calls)
		}
	})
}

// TestTestDepsExtractsPromtool: promtool is optional. As root it is taken
// out of the prometheus package (downloaded, never installed: its postinst
// would start a server) into PROMTOOL_DIR; otherwise, or when only
// checking, one line says it is missing and the script still succeeds.
func TestTestDepsExtractsPromtool(t *testing.T) {
	if _, err := exec.LookPath("initdb"); err != nil && !hasPostgres() {
		t.Fatal("this test expects the Postgres server binaries on the machine (make test installs them first)")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Fatal("this test builds a .deb with dpkg-deb, which test-deps.sh needs to extract promtool")
	}
	// A prometheus package holding a promtool that says which it is.
	pkg := filepath.Join(t.TempDir(), "pkg")
	for name, body := range map[string]string{
		"DEBIAN/control":   "Package: prometheus\nVersion: 1.0\nArchitecture: all\nMaintainer: test\nDescription: test\n",
		"usr/bin/promtool": "#!/bin/sh\necho promtool from the test package\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pkg, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	deb := filepath.Join(filepath.Dir(pkg), "prometheus_1.0_all.deb")
	if b, err := exec.Command("dpkg-deb", "--build", pkg, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v: %s", err, b)
	}

	t.Run("RootExtractsIt", func(t *testing.T) {
		out, code, calls, dir := runDeps(t, true, false, deb, "0")
		got, err := exec.Command(filepath.Join(dir, "promtool")).Output()
		if code != 0 || err != nil || string(got) != "promtool from the test package\n" {
			t.Fatalf("exit %d, output %q, apt-get calls %q; installed promtool says %q (%v); want exit 0 and the package's promtool in PROMTOOL_DIR", code, out, calls, got, err)
		}
		if calls != "download -q prometheus\n" || !strings.Contains(out, "extracting promtool") {
			t.Fatalf("apt-get calls %q, output %q; want exactly one call, `download -q prometheus` (never install), and the script saying so", calls, out)
		}
	})
	t.Run("DownloadFailsStillSucceeds", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, true, false, "", "0")
		if code != 0 || strings.Count(calls, "download -q prometheus") != 2 || !strings.Contains(out, "could not extract promtool") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 0, two downloads (before and after apt-get update), a line saying promtool could not be extracted", code, out, calls)
		}
	})
	t.Run("NotRootSaysSo", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, true, false, deb, "1000")
		if code != 0 || calls != "" || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "promtool missing") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 0, one line saying promtool is missing, no calls", code, out, calls)
		}
	})
	t.Run("CheckOnly", func(t *testing.T) {
		out, code, calls, _ := runDeps(t, true, false, deb, "0", "--check")
		if code != 0 || calls != "" || !strings.Contains(out, "promtool missing") {
			t.Fatalf("exit %d, output %q, apt-get calls %q; want exit 0 saying promtool is missing, no calls", code, out, calls)
		}
	})
}

func hasPostgres() bool {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}
