package pipelinetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// WindowFleet: two farms in UTC, 2 s cadence, 60 s windows and 60 s
// allowed lateness (the defaults): north (3 turbines, shard s1) and south
// (2 turbines, shard s2), which sends nothing.
const WindowFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    timezone: UTC
    turbines: [{prefix: N-, from: 1, to: 3, shard: s1}]
  - id: south
    timezone: UTC
    turbines: [{prefix: S-, from: 1, to: 2, shard: s2}]
`

// PublisherWith is a publisher on the pipeline's databases and clock that
// catches up over catchUp.
func (p *Pipeline) PublisherWith(catchUp time.Duration) *publish.Publisher {
	return &publish.Publisher{Control: p.Env.Control, Shards: p.Env.Shards, Now: p.Now, CatchUp: catchUp}
}

// IngestText ingests NDJSON text and fails unless nothing was rejected or
// failed.
func (p *Pipeline) IngestText(t testing.TB, text string) {
	t.Helper()
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(text))
	testdb.Must(t, err, "decoder")
	sum, err := p.In.Ingest(context.Background(), "test", dec)
	testdb.Must(t, err, "ingest")
	if sum.Rejected != 0 || sum.Failed != 0 {
		t.Fatalf("ingest: %+v, want nothing rejected or failed", sum)
	}
}

func line(id string, recorded, received time.Time) string {
	return fmt.Sprintf(`{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
		id, recorded.UTC().Format(time.RFC3339Nano), received.UTC().Format(time.RFC3339Nano))
}

// ReadingsAt ingests one available reading per turbine id, recorded at
// `at`, received at the clock's now.
func (p *Pipeline) ReadingsAt(t testing.TB, at time.Time, ids ...string) {
	t.Helper()
	var text strings.Builder
	for _, id := range ids {
		text.WriteString(line(id, at, p.Now()))
	}
	p.IngestText(t, text.String())
}

// SendAt ingests one reading of turbine id recorded at `at` (received at
// the clock's now), from any goroutine: a hook's error is returned, not
// fatal.
func (p *Pipeline) SendAt(id string, at time.Time) error {
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(line(id, at, p.Now())))
	if err != nil {
		return err
	}
	sum, err := p.In.Ingest(context.Background(), "test", dec)
	if err == nil && sum.Accepted != 1 {
		err = fmt.Errorf("late reading: %+v, want 1 accepted", sum)
	}
	return err
}

// WindowRow is one farm_window row's counts and stamps.
type WindowRow struct {
	Expected, Received, Available int64
	Revision                      int
	ComputedAt, CompleteThrough   time.Time
}

// Window reads farm's window at start on path (fast or final); false when
// there is none.
func (p *Pipeline) Window(t testing.TB, farm string, start time.Time, path string) (WindowRow, bool) {
	t.Helper()
	var w WindowRow
	err := p.Env.Control.QueryRow(context.Background(),
		`SELECT expected, received, available, revision, computed_at, complete_through FROM farm_window WHERE farm_id = $1 AND window_start = $2 AND path = $3`,
		farm, start, path).Scan(&w.Expected, &w.Received, &w.Available, &w.Revision, &w.ComputedAt, &w.CompleteThrough)
	if err != nil {
		return w, false
	}
	return w, true
}

// TurbineDay is one turbine_day row's counts.
type TurbineDay struct {
	Expected, Received, Available, Late, Early int64
	ComputedAt                                 time.Time
}

// TurbineDay reads turbine id's row of day (YYYY-MM-DD).
func (p *Pipeline) TurbineDay(t testing.TB, id, day string) TurbineDay {
	t.Helper()
	var r TurbineDay
	err := p.Env.Control.QueryRow(context.Background(),
		`SELECT expected, received, available, late, early, computed_at FROM turbine_day WHERE turbine_id = $1 AND day = $2`, id, day).
		Scan(&r.Expected, &r.Received, &r.Available, &r.Late, &r.Early, &r.ComputedAt)
	testdb.Must(t, err, "turbine_day %s %s", id, day)
	return r
}
