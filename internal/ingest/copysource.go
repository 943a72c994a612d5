package ingest

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// row is one reading as the writer stores it, in the column order of
// readingsColumns.
type row struct {
	TurbineID  string
	RecordedAt time.Time
	ReceivedAt time.Time
	Available  bool
	PowerKw    float32
	WindMs     float32
	// State is the controller's status code; "" (none) is stored as ''.
	State string
}

// The writer's COPY targets: readings, and the session's temporary
// readings_staging (created by sharddb's ReadingsStagingCreate, which
// shadows the always-empty public template). The column list is checked
// against the schema by TestCopyColumnsMatchSchema.
var (
	readingsTable   = pgx.Identifier{"readings"}
	stagingTable    = pgx.Identifier{"readings_staging"}
	readingsColumns = []string{"turbine_id", "recorded_at", "received_at", "available", "power_kw", "wind_ms", "state"}
)

// copySource feeds a batch to COPY without allocating per row: Values
// returns the same slice every time, holding pointers into the current row
// (pgx encodes a pointer as the value it points to). sqlc's generated
// :copyfrom iterator boxes every value of a row into a fresh slice; on a
// 13 M-row ingest that garbage kept the process below its raw-COPY floor
// (BENCHMARKS.md, "Ingest").
type copySource struct {
	rows   []row
	next   int
	values [7]any
}

func newCopySource(rows []row) *copySource {
	return &copySource{rows: rows}
}

func (s *copySource) Next() bool {
	if s.next >= len(s.rows) {
		return false
	}
	r := &s.rows[s.next]
	s.next++
	// State "" is stored as '' (none), not NULL: an index entry with a NULL
	// is 8 bytes longer (readings.state).
	s.values = [7]any{&r.TurbineID, &r.RecordedAt, &r.ReceivedAt, &r.Available, &r.PowerKw, &r.WindMs, &r.State}
	return true
}

func (s *copySource) Values() ([]any, error) { return s.values[:], nil }

func (s *copySource) Err() error { return nil }
