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
// which needs no lock); `make test` drops them all when it ends, and a test
// binary that finds more than sweepAbove of them at its start drops them in
// the background (a developer's repeated `go test` runs stay bounded) while
// its tests go on.
const (
	doneComment = "galewatch test database, done"
	sweepAbove  = 200
)

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
	return sweep(ctx, maint, 0)
}

// sweep drops the done databases when there are more than above.
func sweep(ctx context.Context, maint string, above int) (int, error) {
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
	if err != nil || len(done) <= above {
		return 0, err
	}
	for i, db := range done {
		if err := pgserver.DropDatabase(ctx, maint, db); err != nil {
			return i, err
		}
	}
	return len(done), nil
}

// sweepOnce looks at each server once per test binary, at its first use,
// and sweeps it in the background when too many done databases wait: the
// tests never wait for the sweep's checkpoints.
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
	go func() { _, _ = sweep(context.Background(), maint, sweepAbove) }()
}
