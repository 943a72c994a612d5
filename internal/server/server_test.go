package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestExposure(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.10:8080", "", false},
		{"0.0.0.0:8080", testToken, true},
	} {
		cfg := server.DefaultConfig()
		cfg.Addr, cfg.Token = tc.addr, tc.token
		err := cfg.CheckExposure()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, server.ErrExposed)) {
			t.Errorf("addr %q token %q: err = %v, want ok=%v", tc.addr, tc.token, err, tc.ok)
		}
		if !tc.ok {
			// ListenAndServe refuses too, before binding anything.
			if err := server.ListenAndServe(context.Background(), cfg, http.NotFoundHandler(), nil); !errors.Is(err, server.ErrExposed) {
				t.Errorf("ListenAndServe on %q without a token: %v, want ErrExposed", tc.addr, err)
			}
		}
	}
}

// serve runs a Server with cfg on a free loopback port and returns its URL.
func serve(t *testing.T, s *server.Server, cfg server.Config) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- server.ListenAndServe(ctx, cfg, s, func(a net.Addr) { addr <- a }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addr:
		return "http://" + a.String()
	case err := <-done:
		t.Fatalf("server: %v", err)
	}
	return ""
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	testdb.Must(t, err, "request")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	testdb.Must(t, err, "GET %s", url)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAccessRules(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret data") })

	t.Run("Token", func(t *testing.T) {
		cfg := server.DefaultConfig()
		cfg.Token = testToken
		s := server.New(env.Control, env.Shards, cfg)
		s.Handle("/riverui/", ok)
		s.Handle("POST /v1/readings", ok)
		url := serve(t, s, cfg)
		for _, tc := range []struct {
			path   string
			header []string
			want   int
		}{
			{"/healthz", nil, 200},
			{"/riverui/", nil, 401},
			{"/riverui/", []string{"Authorization", "Bearer wrong"}, 401},
			{"/riverui/", []string{"Authorization", "Bearer " + testToken}, 200},
			{"/riverui/", []string{"Authorization", "Basic " + basic("anyone", testToken)}, 200},
			{"/riverui/", []string{"Authorization", "Basic " + basic("admin", "nope")}, 401},
			{"/no-such-page", nil, 401}, // unknown paths do not tell what exists
		} {
			code, body := get(t, url+tc.path, tc.header...)
			if code != tc.want || (code != 200 && strings.Contains(body, "secret data")) {
				t.Errorf("GET %s %v: %d %q, want %d", tc.path, tc.header, code, body, tc.want)
			}
		}
	})

	t.Run("LoopbackWithoutToken", func(t *testing.T) {
		cfg := server.DefaultConfig()
		s := server.New(env.Control, env.Shards, cfg)
		s.Handle("/riverui/", ok)
		url := serve(t, s, cfg)
		if code, _ := get(t, url+"/riverui/"); code != 200 {
			t.Errorf("loopback without a token: %d, want 200", code)
		}
		// A page on another site whose name resolves to 127.0.0.1 (DNS
		// rebinding) sends its own host name: refused.
		if code, body := get(t, url+"/riverui/", "Host", "evil.example:8080"); code != 403 || strings.Contains(body, "secret") {
			t.Errorf("Host evil.example: %d %q, want 403", code, body)
		}
		if code, _ := get(t, url+"/healthz", "Host", "evil.example:8080"); code != 200 {
			t.Errorf("healthz for any host: %d, want 200", code)
		}
	})
}

// TestCrossSiteRequestsAreRefused: a page on another site cannot make the
// browser send a state-changing request, even one a loopback server or a
// cached login would otherwise let through; a non-browser client (no
// Origin, no Sec-Fetch-Site) and a same-origin page can.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	for _, token := range []string{"", testToken} {
		cfg := server.DefaultConfig()
		cfg.Token = token
		var deleted int
		s := server.New(env.Control, env.Shards, cfg)
		s.Handle("POST /riverui/api/jobs/delete", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { deleted++ }))
		url := serve(t, s, cfg)
		for _, tc := range []struct {
			name   string
			header map[string]string
			want   int
		}{
			{"CrossSiteFetch", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "text/plain"}, 403},
			{"OriginOnly", map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}, 403},
			{"SameOrigin", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
			{"NotABrowser", nil, 200},
		} {
			req, err := http.NewRequest(http.MethodPost, url+"/riverui/api/jobs/delete", strings.NewReader(`{"job_ids":["1"]}`))
			testdb.Must(t, err, "request")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if token != "" {
				req.SetBasicAuth("admin", token) // as a browser would, once logged in
			}
			resp, err := http.DefaultClient.Do(req)
			testdb.Must(t, err, "POST")
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("token %q, %s: %d, want %d", token, tc.name, resp.StatusCode, tc.want)
			}
		}
		if deleted != 2 {
			t.Errorf("token %q: the handler ran %d times, want 2 (same-origin and non-browser only)", token, deleted)
		}
	}
}

func basic(user, pass string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(user, pass)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

// TestHealthzSaysOkOrDownOnly: a shard that cannot be reached is "down";
// the body names no host, port or user.
func TestHealthzSaysOkOrDownOnly(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}, {name: s2}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}, {id: T-2, shard: s2}]}]\n")
	// Point s2 at a port nothing listens on, as a DBA would after moving it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testdb.Must(t, err, "listen")
	dead := ln.Addr().String()
	ln.Close()
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = $1 WHERE name = 's2'`, "postgres://galewatch@"+dead+"/galewatch_s2?connect_timeout=1")
	shards, err := env.Registry.OpenShards(context.Background(), 2)
	testdb.Must(t, err, "open shards")
	t.Cleanup(shards.Close)
	cfg := server.DefaultConfig()
	url := serve(t, server.New(env.Control, shards, cfg), cfg)
	code, body := get(t, url+"/healthz")
	want := `{"status":"degraded","control":"ok","shards":{"s1":"ok","s2":"down"}}`
	if code != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("healthz: %d %s, want 200 %s", code, body, want)
	}
}

// TestHealthzWithAHungShard: a shard whose server hangs (its connections
// open, nothing answering) is "down" after the health bound, and the
// shards after it in name order are still "ok": they are pinged at once,
// each within its own bound, not one after the other out of one budget
// (which the hung s1 used up, reporting s2 and s3 down too).
func TestHealthzWithAHungShard(t *testing.T) {
	t.Parallel()
	proxy, dsn := testdb.ProxiedDatabase(t)
	env := testdb.New(t, fmt.Sprintf("shards: [{name: s1, dsn: '%s'}, {name: s2}, {name: s3}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}, {id: T-2, shard: s2}, {id: T-3, shard: s3}]}]\n", dsn))
	cfg := server.DefaultConfig()
	url := serve(t, server.New(env.Control, env.Shards, cfg), cfg)
	if code, body := get(t, url+"/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("healthz before the hang: %d %s", code, body)
	}
	proxy.Hang()
	start := time.Now()
	code, body := get(t, url+"/healthz")
	took := time.Since(start)
	want := `{"status":"degraded","control":"ok","shards":{"s1":"down","s2":"ok","s3":"ok"}}`
	if code != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("healthz with s1 hung: %d %s, want 200 %s", code, body, want)
	}
	// The answer naming s1 down is the bound firing; its time only catches a hang.
	const hang = 30 * time.Second // normal 2.0 s (HealthTimeout); 30 s catches a hang
	if took > hang {
		t.Fatalf("healthz with s1 hung took %v: it hung (normal %v, its bound)", took, server.HealthTimeout)
	}
	proxy.Resume()
	if code, body := get(t, url+"/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("healthz after the hang: %d %s, want ok", code, body)
	}
}

// TestSlowClientIsCutOff: a client that sends its headers and then trickles
// its body a byte at a time is disconnected once the read timeout passes,
// and the handler sees its read fail; it cannot hold the connection.
func TestSlowClientIsCutOff(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	cfg := server.DefaultConfig()
	cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout = time.Second, 2*time.Second, time.Second
	readErr := make(chan error, 1)
	s := server.New(env.Control, env.Shards, cfg)
	s.Handle("POST /v1/readings", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		readErr <- err
	}))
	url := serve(t, s, cfg)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	testdb.Must(t, err, "dial")
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/readings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n")
	// The trickle would take 10,000 s to send the body: the connection
	// closing first is the read timeout's doing, however late it comes.
	const hang = 15 * time.Second // normal 1.0 s (the read timeout); 15 s catches a hang
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		// The server closes the connection (or answers) once it gives up.
		_, _ = bufio.NewReader(conn).ReadByte()
		close(closed)
	}()
	trickle := time.NewTicker(100 * time.Millisecond)
	defer trickle.Stop()
	for {
		select {
		case <-closed:
			select {
			case err := <-readErr:
				if err == nil {
					t.Fatal("the handler read the trickled body without an error")
				}
			case <-time.After(hang):
				t.Fatalf("the handler's read of the trickled body hung %v after the connection closed", hang)
			}
			return
		case <-trickle.C:
			if time.Since(start) > hang {
				t.Fatalf("a trickling client held the connection for %v: the read timeout never cut it off (hung)", hang)
			}
			_, _ = conn.Write([]byte("{"))
		}
	}
}
