package testdb

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/pgserver"
)

// A finished test's databases are not dropped at once: Postgres 15 makes
// every DROP DATABASE wait for a checkpoint, and a checkpoint every few
// seconds (one per test database) wrote the running tests' buffers to disk
// again and again. A finished test marks its databases done (a comment,
// which needs no lock); the next test binary to start on the server, and
// `make test` when it ends, drop every done database in one burst.
const doneComment = "galewatch test database, done"

// markDone marks dbs as left by a finished test.
func markDone(maint string, dbs []string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, maint)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	for _, db := range dbs {
		_, _ = conn.Exec(ctx, "COMMENT ON DATABASE "+pgx.Identifier{db}.Sanitize()+" IS "+quote(doneComment))
	}
}

// Sweep drops every database a finished test marked done on the server
// behind maint (whichever test binary left it), and returns how many.
func Sweep(ctx context.Context, maint string) (int, error) {
	conn, err := pgx.Connect(ctx, maint)
	if err != nil {
		return 0, err
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') = $1 ORDER BY datname`, doneComment)
	if err != nil {
		conn.Close(ctx)
		return 0, err
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	conn.Close(ctx)
	if err != nil {
		return 0, err
	}
	for i, db := range done {
		if err := pgserver.DropDatabase(ctx, maint, db); err != nil {
			return i, err
		}
	}
	return len(done), nil
}

// sweptOnce sweeps each server once per test binary, at its first use.
var (
	sweptMu sync.Mutex
	swept   = map[string]bool{}
)

func sweepOnce(maint string) {
	sweptMu.Lock()
	defer sweptMu.Unlock()
	if swept[maint] {
		return
	}
	swept[maint] = true
	_, _ = Sweep(context.Background(), maint)
}
