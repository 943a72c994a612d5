package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestServeDemoFlagsAreCheckedFirst: a bad --demo flag is refused with
// exit 2, naming the flag, before anything is started (the database URL
// here leads nowhere).
func TestServeDemoFlagsAreCheckedFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--demo", "--demo-saturday", "28/11/2026"}, 2, `--demo-saturday: want a date YYYY-MM-DD, got "28/11/2026"`},
		{[]string{"serve", "--demo", "--demo-day-after", "3m", "--demo-replay-after", "1m"}, 2, "--demo-replay-after (1m0s) must not be before --demo-day-after (3m0s)"},
		{[]string{"serve", "--demo", "--demo-fleet", "no-such-fleet.yaml"}, 1, "--demo-fleet"},
	} {
		cfg := ConfigFromEnv()
		cfg.DatabaseURL = "postgres://nobody@127.0.0.1:1/nothing?connect_timeout=1"
		m := &Main{Config: cfg, Now: time.Now}
		cmd := m.Command()
		cmd.SetArgs(append(c.args, "--addr", "127.0.0.1:0"))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := cmd.ExecuteContext(ctx)
		cancel()
		m.Close()
		if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (exit %d), want exit %d saying %q", strings.Join(c.args, " "), err, exitCode(err), c.code, c.want)
		}
	}
}
