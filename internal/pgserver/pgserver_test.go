package pgserver_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestUpIsIdempotent(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Log("DATABASE_URL is set: the embedded cluster is not used, nothing to test here")
		return
	}
	ctx := context.Background()
	s := pgserver.New(testdb.Home(t))
	if err := s.Up(ctx); err != nil {
		t.Fatal(err)
	}
	port := s.Port()
	if err := s.Up(ctx); err != nil {
		t.Fatalf("second Up: %v", err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Port != port || port == 0 {
		t.Fatalf("status after two Ups = %+v, want running on port %d", st, port)
	}
	for _, url := range []string{s.URL("postgres"), s.TCPURL("postgres")} {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("connect %s: %v", url, err)
		}
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 over %s = %d, %v", url, one, err)
		}
		conn.Close(ctx)
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h:5432/control?sslmode=disable": "postgres://u@h:5432/control_s1?sslmode=disable",
		"host=h port=5432 dbname=control user=u":      "host=h port=5432 user=u dbname=control_s1",
		// The embedded cluster's URL: socket folder and password file stay.
		"postgres://galewatch@/galewatch?host=%2Ftmp%2Fgw&passfile=%2Fp%2Fpg%2Fpgpass&port=5432&sslmode=disable": "postgres://galewatch@/control_s1?host=%2Ftmp%2Fgw&passfile=%2Fp%2Fpg%2Fpgpass&port=5432&sslmode=disable",
	} {
		got, err := pgserver.WithDatabase(in, "control_s1")
		if err != nil || got != want {
			t.Fatalf("WithDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
