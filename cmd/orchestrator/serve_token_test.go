package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/server"
)

// TestServeRefusesAWeakToken: serve reads GALEWATCH_TOKEN trimmed and
// refuses, before it touches a database, a setting that is blank or
// shorter than 16 characters, on 0.0.0.0 as on loopback; the error names
// the variable and not the token. (A token of one space used to open the
// server on 0.0.0.0.) The database URL points at a closed port, so a
// serve that went on would fail on it instead.
func TestServeRefusesAWeakToken(t *testing.T) {
	for _, tc := range []struct{ name, token, secret string }{
		{"OneSpace", " ", ""},
		{"ShortWithNewline", "hunter2hunter2\n", "hunter2"},
	} {
		for _, addr := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
			t.Setenv(server.TokenEnv, tc.token)
			cfg := Config{DatabaseURL: "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", Home: t.TempDir()}
			err := runMain(&Main{Config: cfg, Now: time.Now}, "serve", "--addr", addr)
			if !errors.Is(err, server.ErrWeakToken) || !strings.Contains(err.Error(), server.TokenEnv) ||
				(tc.secret != "" && strings.Contains(err.Error(), tc.secret)) {
				t.Errorf("%s on %s: serve returned %v; want the weak-token refusal naming %s, without the token", tc.name, addr, err, server.TokenEnv)
			}
		}
	}
}
