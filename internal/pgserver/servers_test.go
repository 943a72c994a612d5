package pgserver_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestNamedServerStopPauseResume: a named cluster beside the default one has
// its own postmaster and port; paused, a query on an open connection and a
// new connection both hang (they end by their own deadline, 1 s here), and
// both work again after Resume; stopped as a crash would, Up recovers it.
func TestNamedServerStopPauseResume(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Log("DATABASE_URL is set: the embedded clusters are not used, nothing to test here")
		return
	}
	ctx := context.Background()
	home := testdb.Home(t)
	s := pgserver.Named(home, "pause-test")
	def := pgserver.New(home)
	for _, srv := range []*pgserver.Server{def, s} {
		if err := srv.Up(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if s.Port() == def.Port() || s.Port() == 0 {
		t.Fatalf("named server port %d, default %d: want its own", s.Port(), def.Port())
	}
	pm, err := s.PostmasterPID()
	if err != nil {
		t.Fatal(err)
	}
	if dpm, _ := def.PostmasterPID(); dpm == pm {
		t.Fatalf("named server shares the default's postmaster %d", pm)
	}
	// Every cluster a test starts, it stops.
	t.Cleanup(func() { _ = s.Resume(); _ = s.Down(context.Background()) })

	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	one := func(c *pgx.Conn, within time.Duration) error {
		qctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		var n int
		return c.QueryRow(qctx, "SELECT 1").Scan(&n)
	}
	if err := one(conn, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := one(conn, time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("query on a paused server: %v, want the deadline", err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err = pgx.Connect(cctx, s.URL("postgres"))
	cancel()
	if err == nil {
		t.Fatal("connected to a paused server")
	}
	const hang = 30 * time.Second // normal 2.0 s (the two deadlines); 30 s catches a hang
	if took := time.Since(start); took > hang {
		t.Fatalf("the two calls on a paused server took %v: they hung past their 2 s of deadlines", took)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	conn2, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect after Resume: %v", err)
	}
	if err := one(conn2, 5*time.Second); err != nil {
		t.Fatalf("query after Resume: %v", err)
	}
	conn2.Close(ctx)

	if err := s.StopImmediate(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx); st.Running {
		t.Fatal("still running after StopImmediate")
	}
	if err := s.Up(ctx); err != nil {
		t.Fatalf("Up after an immediate stop: %v", err)
	}
	conn3, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect after restart: %v", err)
	}
	conn3.Close(ctx)
	if npm, _ := s.PostmasterPID(); npm == pm {
		t.Fatalf("postmaster %d after a restart, the same as before", npm)
	}
	names, err := pgserver.ServerNames(home)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n == "pause-test"
	}
	if !found {
		t.Fatalf("ServerNames = %v, want pause-test among them", names)
	}
}
