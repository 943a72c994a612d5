package jobs

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/fleet"
)

// redactMiddleware hands River a failed job's error without database
// addresses (fleet.Redact): River stores it in river_job.errors, which the
// River UI shows to whoever holds the token. The operator's log gets the
// original, host and user included.
type redactMiddleware struct {
	river.MiddlewareDefaults
	name func(*pgconn.Config) string
}

var _ rivertype.WorkerMiddleware = (*redactMiddleware)(nil)

func newRedactMiddleware(control *pgxpool.Pool, shards *fleet.Shards) *redactMiddleware {
	controlCfg := control.Config().ConnConfig.Config
	return &redactMiddleware{name: func(c *pgconn.Config) string {
		if fleet.SameTarget(c, &controlCfg) {
			return "control database"
		}
		return shards.Name(c)
	}}
}

func (m *redactMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	err := doInner(ctx)
	if err == nil {
		return nil
	}
	red := fleet.Redact(err, m.name)
	if red != err {
		slog.Warn("job failed (its error is stored without database addresses)", "job_id", job.ID, "kind", job.Kind, "attempt", job.Attempt, "err", err)
	}
	return red
}
