package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/fleet"
)

// cut is a wrapper that rewords its cause's text (keeps its first bytes).
type cut struct{ err error }

func (c cut) Error() string { return c.err.Error()[:40] + "…" }
func (c cut) Unwrap() error { return c.err }

// TestRedact: a connection failure anywhere in an error's chain is said
// as "<database>: cannot connect: <reason>", and network addresses of
// failures on an open connection are left out; the chain (errors.Is,
// errors.As) is the original's, and an error without either is returned
// as it is. No server is needed: the connection goes to a closed port.
func TestRedact(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, connErr := pgconn.Connect(ctx, "postgres://gw_user@127.0.0.1:"+port+"/gw_db?sslmode=disable&connect_timeout=5")
	var ce *pgconn.ConnectError
	if !errors.As(connErr, &ce) {
		t.Fatalf("connect to a closed port: %v, want a *pgconn.ConnectError", connErr)
	}
	name := func(c *pgconn.Config) string {
		if c.Database == "gw_db" {
			return "shard s9"
		}
		return ""
	}
	reset := &net.OpError{Op: "read", Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 40000},
		Addr: &net.TCPAddr{IP: net.IPv4(10, 9, 8, 7), Port: 5432}, Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	dns := &net.DNSError{Err: "no such host", Name: "db9.internal", Server: "10.0.0.53:53", IsNotFound: true}
	plain := errors.New("rollup f/d/s9: claim: no rows")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Bare", connErr, "shard s9: cannot connect: connection refused"},
		{"NamedBefore", fmt.Errorf("rollup f/2026-08-01/s9: shard s9: %w", connErr), "rollup f/2026-08-01/s9: shard s9: cannot connect: connection refused"},
		{"NotNamedBefore", fmt.Errorf("lock: %w", connErr), "lock: shard s9: cannot connect: connection refused"},
		{"Joined", errors.Join(fmt.Errorf("drain shard s9: %w", connErr), fmt.Errorf("orphans: %w", plain)), "drain shard s9: cannot connect: connection refused\norphans: rollup f/d/s9: claim: no rows"},
		{"Reworded", fmt.Errorf("x: %w", cut{connErr}), "shard s9: cannot connect: connection refused"},
		{"ReadReset", fmt.Errorf("shard s9: failed to receive message: %w", reset), "shard s9: failed to receive message: read tcp: connection reset by peer"},
		{"HostLookup", fmt.Errorf("dial: %w", dns), "dial: host name lookup: no such host"},
		{"Untouched", plain, plain.Error()},
	} {
		got := fleet.Redact(tc.err, name)
		if got.Error() != tc.want {
			t.Errorf("%s: Redact(%q)\n = %q\nwant %q", tc.name, tc.err, got, tc.want)
		}
		for _, leak := range []string{"127.0.0.1", port, "gw_user", "gw_db", "10.1.2.3", "10.9.8.7", "db9.internal", "10.0.0.53", "failed to connect"} {
			if strings.Contains(got.Error(), leak) {
				t.Errorf("%s: %q carries %q", tc.name, got, leak)
			}
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("%s: the redacted error does not unwrap to the original", tc.name)
		}
	}
	if got := fleet.Redact(plain, name); got != plain {
		t.Errorf("an error without addresses came back as %#v, want the same error", got)
	}
	var named *fleet.ConnectError
	if got := fleet.Redact(fmt.Errorf("a: %w", connErr), name); !errors.As(got, &named) || named.DB != "shard s9" || !errors.Is(got, syscall.ECONNREFUSED) {
		t.Errorf("Redact(...) = %#v: want a *fleet.ConnectError of shard s9 in its chain, and ECONNREFUSED", got)
	}
	if got := fleet.Redact(connErr, func(*pgconn.Config) string { return "" }).Error(); got != "a database: cannot connect: connection refused" {
		t.Errorf("a connection no one names: %q", got)
	}
}
