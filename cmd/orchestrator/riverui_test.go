package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRiverUIInChromium serves the real River UI mount behind the server's
// token and renders the job list in headless Chromium: the queued
// rollup_day job of the test must be on the page.
func TestRiverUIInChromium(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("headless Chromium is needed for this test: apt-get install chromium (`make test` installs it when it can)")
	}
	env := testdb.New(t, testdb.ArdnaveFleet)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL = env.ControlDSN
	m := &Main{Config: cfg, Now: time.Now}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	jc := jobs.DefaultConfig()
	jc.Periodic = false
	client, err := m.River(ctx, jc) // not started: the job stays queued for the page to show
	testdb.Must(t, err, "river client")
	_, err = client.Insert(ctx, jobs.RollupDayArgs{FarmID: "kilmore-sands", Day: "2026-08-01", Shard: "s4", Reason: rollup.ReasonManual}, nil)
	testdb.Must(t, err, "insert job")

	control, _ := m.Control(ctx)
	shards, _ := m.Shards(ctx)
	srvCfg := server.DefaultConfig()
	srvCfg.Token = "s3cret"
	srv := server.New(control, shards, srvCfg)
	testdb.Must(t, srv.MountRiverUI(ctx, client), "mount River UI")
	ts := httptest.NewServer(srv)
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/riverui/")
	testdb.Must(t, err, "GET without credentials")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("River UI without credentials: %d, want 401", resp.StatusCode)
	}

	// The browser reaches the UI through a proxy that adds the token to
	// every request, as an operator's authenticating proxy would (Chromium
	// does not pass credentials written in the URL on to the page's own API
	// calls).
	target, _ := neturl.Parse(ts.URL)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("Authorization", "Bearer s3cret")
	}})
	defer proxy.Close()
	url := proxy.URL + "/riverui/jobs?state=available"
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=20000", "--dump-dom", url)
	cmd.Stderr = os.Stderr
	dom, err := cmd.Output()
	testdb.Must(t, err, "chromium")
	page := string(dom)
	for _, want := range []string{"rollup_day", "rollup_s4"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the rendered job list does not show %q (%d bytes of DOM): %.600s", want, len(page), page)
		}
	}
}
