package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// repoint is a shard of the plan that the registry knows on another
// server or database.
type repoint struct {
	index    int // in plan.Shards
	name     string
	from, to string // serverOf, before and after
}

// repointed lists the plan's shards that the registry already knows on
// another server or database: an apply copies no shard's data, so every
// process started after it would write and read that shard's turbines
// where their readings are not (while a running serve keeps the old
// connection). ApplyOptions.RepointShards allows it, for a database the
// DBA has copied there.
func (r *Registry) repointed(ctx context.Context, q *controldb.Queries, plan *Plan) ([]repoint, error) {
	known, err := q.ShardList(ctx)
	if err != nil {
		return nil, err
	}
	was := make(map[string]string, len(known))
	for _, s := range known {
		dsn := ""
		if s.Dsn != nil {
			dsn = *s.Dsn
		}
		was[s.Name] = r.serverOf(dsn, s.Database)
	}
	var out []repoint
	for i, s := range plan.Shards {
		old, ok := was[s.Name]
		if !ok {
			continue
		}
		_, db, err := r.shardDSN(s.Name, s.DSN)
		if err != nil {
			return nil, err
		}
		if now := r.serverOf(s.DSN, db); now != old {
			out = append(out, repoint{index: i, name: s.Name, from: old, to: now})
		}
	}
	return out, nil
}

// problem is the refusal of a repoint without RepointShards.
func (p repoint) problem() string {
	return fmt.Sprintf("shards[%d] (%s): would move from %s to %s; an apply copies no data, so the shard's turbines would be "+
		"written and read where their readings are not (give the dsn it was applied with; or copy the database there yourself, "+
		"stop serve and work, and apply with --repoint-shards)", p.index, p.name, p.from, p.to)
}

// serverOf names where a shard's database is, without user or password:
// host:port/database, the control server's when dsn is empty.
func (r *Registry) serverOf(dsn, database string) string {
	where := "the control server"
	if dsn == "" {
		dsn = r.ControlDSN
	} else {
		where = ""
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "database " + database + " (" + err.Error() + ")"
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	if where == "" {
		where = fmt.Sprintf("%s:%d", host, cfg.Port)
	} else {
		where = fmt.Sprintf("%s (%s:%d)", where, host, cfg.Port)
	}
	return "database " + database + " on " + where
}
