package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// testToken is a token long enough for CheckExposure (server.MinTokenLen).
const testToken = "s3cret-s3cret-s3cret"

// TestTokenHygiene: a token is what its setting holds without surrounding
// whitespace (a secret file's final newline included), and a setting that
// leaves fewer than 16 characters is refused at start, with the variable
// named and the token not repeated. A token of one space used to pass as
// "a token" and open the server on 0.0.0.0; one with a trailing newline
// never matched a Bearer header.
func TestTokenHygiene(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"Unset", "", ""},
		{"TrailingNewline", "0123456789abcdef\n", "0123456789abcdef"},
		{"CRLFAndIndent", " \t0123456789abcdef\r\n", "0123456789abcdef"},
		{"InnerSpaceKept", "correct horse battery", "correct horse battery"},
		{"Unicode16", "ðððððððððððððððð", "ðððððððððððððððð"},
	} {
		got, err := server.ParseToken(tc.raw)
		if err != nil || got != tc.want {
			t.Errorf("%s: ParseToken(%q) = %q, %v; want %q", tc.name, tc.raw, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, raw, secret, want string
	}{
		{"OneSpace", " ", "", "holds only whitespace"},
		{"Newlines", "\n\r\n", "", "holds only whitespace"},
		{"Short", "hunter2hunter2\n", "hunter2", "shorter than 16 characters"},
		{"FifteenAfterTrim", "  0123456789abcde  ", "0123456789abcde", "shorter than 16 characters"},
		{"InnerControl", "0123456789\x00abcdef", "0123456789", "control character"},
	} {
		_, err := server.ParseToken(tc.raw)
		if !errors.Is(err, server.ErrWeakToken) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), server.TokenEnv) ||
			(tc.secret != "" && strings.Contains(err.Error(), tc.secret)) {
			t.Errorf("%s: ParseToken(%q) = %v; want ErrWeakToken naming %s, saying %q, without the token", tc.name, tc.raw, err, server.TokenEnv, tc.want)
		}
		// The server refuses to start with it, on any address, before
		// binding (a server that did start returns nil: ctx is done).
		done, cancel := context.WithCancel(context.Background())
		cancel()
		for _, addr := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
			cfg := server.DefaultConfig()
			cfg.Addr, cfg.Token = addr, tc.raw
			if err := server.ListenAndServe(done, cfg, http.NotFoundHandler(), nil); !errors.Is(err, server.ErrWeakToken) {
				t.Errorf("%s: ListenAndServe on %s: %v, want ErrWeakToken", tc.name, addr, err)
			}
		}
	}

	// A token read with its newline matches the header clients send.
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	cfg := server.DefaultConfig()
	cfg.Token = testToken + "\n"
	if err := cfg.CheckExposure(); err != nil {
		t.Fatalf("a token with a trailing newline: %v", err)
	}
	url := serve(t, server.New(env.Control, env.Shards, cfg), cfg)
	for _, tc := range []struct {
		header []string
		want   int
	}{
		{[]string{"Authorization", "Bearer " + testToken}, 200},
		{[]string{"Authorization", "Basic " + basic("anyone", testToken)}, 200},
		{[]string{"Authorization", "Bearer " + testToken[:len(testToken)-1]}, 401},
		{[]string{"Authorization", "Basic " + basic("anyone", testToken+"\n")}, 401},
		{nil, 401},
	} {
		if code, _ := get(t, url+"/api/v1/farms", tc.header...); code != tc.want {
			t.Errorf("GET /api/v1/farms %q: %d, want %d", tc.header, code, tc.want)
		}
	}
}
