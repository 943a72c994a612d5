package testdb

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/pgserver"
)

// A finished test's databases are not dropped at once: Postgres 15 makes
// every DROP DATABASE wait for a checkpoint, and a checkpoint every few
// seconds (one per test database) wrote the running tests' buffers to disk
// again and again. A finished test marks its databases done (a comment,
// which needs no lock, with the time). `make test` runs on a cluster of
// its own and removes it when it ends (cmd sweep -discard), and on a
// DATABASE_URL server drops them then (Sweep); a test binary drops in the
// background, at its start, those marked more than sweepAfter ago: a
// developer's plain `go test` runs stay bounded, and a running `make test`
// never pays for a burst of checkpoints in the middle of its heaviest
// tests.
const (
	doneComment = "galewatch test database, done"
	sweepAfter  = time.Hour
)

// markDone marks dbs as left by a finished test.
func markDone(maint string, dbs []string) {
	ctx := context.Background()
	conn, err := maintPool(maint)
	if err != nil {
		return
	}
	for _, db := range dbs {
		_, _ = conn.Exec(ctx, "COMMENT ON DATABASE "+pgx.Identifier{db}.Sanitize()+" IS "+quote(doneComment+" "+time.Now().UTC().Format(time.RFC3339)))
	}
}

// Sweep drops every database a finished test marked done on the server
// behind maint (whichever test binary left it), and returns how many.
func Sweep(ctx context.Context, maint string) (int, error) {
	return sweep(ctx, maint, 0)
}

// sweep drops the databases marked done more than age ago.
func sweep(ctx context.Context, maint string, age time.Duration) (int, error) {
	conn, err := pgx.Connect(ctx, maint)
	if err != nil {
		return 0, err
	}
	// RFC 3339 UTC times compare as text (a mark without one is old).
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database
		WHERE starts_with(shobj_description(oid, 'pg_database'), $1)
		  AND trim(substr(shobj_description(oid, 'pg_database'), length($1) + 1)) <= $2
		ORDER BY datname`, doneComment, time.Now().Add(-age).UTC().Format(time.RFC3339))
	if err != nil {
		conn.Close(ctx)
		return 0, err
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	conn.Close(ctx)
	if err != nil {
		return 0, err
	}
	// Drops at once share their checkpoints: a backend that asks for one
	// while another is being taken waits for the next, which serves every
	// request made meanwhile (150 databases: 26 s one at a time, 16 s
	// sixteen at a time).
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		dropped int
		first   error
	)
	next := make(chan string)
	for range sweepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for db := range next {
				err := pgserver.DropDatabase(ctx, maint, db)
				mu.Lock()
				if err == nil {
					dropped++
				} else if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, db := range done {
		next <- db
	}
	close(next)
	wg.Wait()
	return dropped, first
}

// sweepers is how many databases a sweep drops at once.
const sweepers = 16

// sweepOnce sweeps each server once per test binary, at its first use, in
// the background: the tests never wait for the sweep's checkpoints.
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
	go func() { _, _ = sweep(context.Background(), maint, sweepAfter) }()
}
