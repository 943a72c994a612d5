package jobs_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestJobErrorsNameTheShardNotItsAddress: shard s2's password is wrong
// and shard s3's server does not listen. The rollup_day jobs of s2 and s3
// and a drain (which touches every shard) fail through real River, and
// what River stores in river_job.errors (what the River UI shows) names
// the shard and why, never the host, port, user or database: pgconn's
// ConnectError printed `user=galewatch database=...`, each address it
// dialled, and the server's "password authentication failed for user".
func TestJobErrorsNameTheShardNotItsAddress(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.ArdnaveFleet)
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang) // a hang bound, after the setup
	defer cancel()

	ctl, err := pgconn.ParseConfig(env.ControlDSN)
	testdb.Must(t, err, "parse control DSN")
	host := ctl.Host
	if strings.HasPrefix(host, "/") {
		host = "127.0.0.1" // over TCP, so the error has an address to leak
	}
	wrongPass := filepath.Join(t.TempDir(), "pgpass")
	testdb.Must(t, os.WriteFile(wrongPass, []byte("*:*:*:*:not-the-password\n"), 0o600), "pgpass")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testdb.Must(t, err, "listen")
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dsn := func(hostPort, db, passfile string) string {
		q := url.Values{"sslmode": {"disable"}, "connect_timeout": {"5"}, "passfile": {passfile}}
		return (&url.URL{Scheme: "postgres", User: url.User(pgserver.SuperUser), Host: hostPort, Path: "/" + db, RawQuery: q.Encode()}).String()
	}
	s2db, s3db := ctl.Database+"_s2", ctl.Database+"_s3"
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = $1 WHERE name = 's2'`, dsn(net.JoinHostPort(host, strconv.Itoa(int(ctl.Port))), s2db, wrongPass))
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = $1 WHERE name = 's3'`, dsn(net.JoinHostPort("127.0.0.1", strconv.Itoa(closedPort)), s3db, wrongPass))
	shards, err := env.Registry.OpenShards(ctx, 2)
	testdb.Must(t, err, "open shards")
	defer shards.Close()

	now := func() time.Time { return time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC) }
	cfg := jobs.DefaultConfig()
	cfg.Periodic = false
	cfg.RetryPolicy = retryInAnHour{}
	client, err := jobs.NewClient(ctx, cfg, jobs.Deps{Control: env.Control, Shards: shards, Now: now,
		Computer: &rollup.Computer{Control: env.Control, Shards: shards, Now: now},
		Drainer:  &drain.Drainer{Control: env.Control, Shards: shards, Now: now}})
	testdb.Must(t, err, "client")
	var ids []int64
	for _, s := range []string{"s2", "s3"} {
		res, err := client.Insert(ctx, jobs.RollupDayArgs{FarmID: "ardnave-point", Day: "2026-08-01", Shard: s, Reason: rollup.ReasonManual}, nil)
		testdb.Must(t, err, "insert rollup_day on %s", s)
		ids = append(ids, res.Job.ID)
	}
	res, err := client.Insert(ctx, jobs.DrainDirtyArgs{Immediate: true}, nil)
	testdb.Must(t, err, "insert drain_dirty")
	ids = append(ids, res.Job.ID)
	testdb.Must(t, client.Start(ctx), "start River")
	defer func() { _ = client.Stop(context.WithoutCancel(ctx)) }()

	// Each job's first attempt fails; River then stores its error.
	for testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE id = ANY($1) AND cardinality(errors) > 0`, ids) < int64(len(ids)) {
		if ctx.Err() != nil {
			t.Fatal("the jobs did not all fail and record an error within 2 minutes")
		}
		time.Sleep(20 * time.Millisecond) // polling a row
	}
	stored := map[int64]string{}
	rows, err := env.Control.Query(ctx, `SELECT id, errors[1]->>'error' FROM river_job WHERE id = ANY($1)`, ids)
	testdb.Must(t, err, "read river_job.errors")
	for rows.Next() {
		var id int64
		var msg string
		testdb.Must(t, rows.Scan(&id, &msg), "scan")
		stored[id] = msg
	}
	testdb.Must(t, rows.Err(), "rows")

	want := map[int64][]string{
		ids[0]: {"rollup ardnave-point/2026-08-01/s2: shard s2: cannot connect: password authentication failed (SQLSTATE 28P01)"},
		ids[1]: {"rollup ardnave-point/2026-08-01/s3: shard s3: cannot connect: connection refused"},
		ids[2]: {"drain shard s2: cannot connect: password authentication failed (SQLSTATE 28P01)", "drain shard s3: cannot connect: connection refused"},
	}
	leaks := []string{host, ctl.Host, strconv.Itoa(int(ctl.Port)), strconv.Itoa(closedPort), pgserver.SuperUser, s2db, s3db, "user=", "database=", "failed to connect", "dial"}
	for _, id := range ids {
		msg := stored[id]
		t.Logf("job %d: %s", id, msg)
		for _, w := range want[id] {
			if !strings.Contains(msg, w) {
				t.Errorf("job %d: river_job.errors holds %q; want it to contain %q", id, msg, w)
			}
		}
		for _, leak := range leaks {
			if strings.Contains(msg, leak) {
				t.Errorf("job %d: river_job.errors holds %q, which carries %q", id, msg, leak)
			}
		}
	}
}

// retryInAnHour keeps a failed job's next attempt out of the test.
type retryInAnHour struct{}

func (retryInAnHour) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Hour) }

var _ river.ClientRetryPolicy = retryInAnHour{}
