package server_test

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// The status fixture: farm north (Europe/London, 4 turbines at a 10 s
// cadence, 6 h windows: 8,640 slots per turbine-day, 2,160 per
// turbine-window, 8,640 per farm-window) with four days of August 2026,
// each shaped by hand so every number below is known; and farm south
// (UTC), which has published nothing. The server's clock is 4 August
// 13:30 BST.
//
//	08-01 closed, final: N-002 silent 22:00-24:00 (720 slots), N-003 stopped
//	      06:00-12:00 (2,160 slots unavailable); 216 readings of window
//	      06:00 arrived after its fast row: divergence 6.383 / 6.818 per mille
//	08-02 closed, whole; N-004's 06:00-12:00 missed the fast row (62.5 per
//	      mille, a divergence alert); a recompute is requested (rollup_pending)
//	08-03 closed, whole, no fast rows; late readings wait on shard s2
//	      (a mark of 50 readings and 3 marked turbine-windows), which the
//	      drain has read and left to settle: provisional
//	both shards drained at 13:29:55, no mark announced since
//	08-04 in progress: two fast windows published, 12,960 of 17,280
const statusFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    name: North Point
    timezone: Europe/London
    cadence_seconds: 10
    rules: {window: 6h}
    turbines:
      - {prefix: N-, from: 1, to: 3, digits: 3, shard: s1}
      - {id: N-004, shard: s2}
  - id: south
    name: South Sands
    timezone: UTC
    turbines: [{id: S-1, shard: s2}]
`

var london = func() *time.Location {
	l, err := time.LoadLocation("Europe/London")
	if err != nil {
		panic(err)
	}
	return l
}()

var statusNow = time.Date(2026, 8, 4, 13, 30, 0, 0, london)

// bst is a London wall-clock time in August 2026.
func bst(day, hour, minute int) time.Time { return time.Date(2026, 8, day, hour, minute, 0, 0, london) }

type statusEnv struct {
	env *testdb.Env
	srv *server.Server
	url string
}

func statusSetup(t *testing.T, token string) statusEnv {
	t.Helper()
	env := testdb.New(t, statusFleet)
	c := env.Control
	// turbine_day: (turbine, day, shard, received, available, min lag ms, silent hours)
	type td struct {
		id, day, shard      string
		received, available int
		minLag              int
		silent              string
	}
	for _, r := range []td{
		{"N-001", "2026-08-01", "s1", 8640, 8640, -1500, "{}"},
		{"N-002", "2026-08-01", "s1", 7920, 7920, 200, "{22,23}"},
		{"N-003", "2026-08-01", "s1", 8640, 6480, 200, "{}"},
		{"N-004", "2026-08-01", "s2", 8640, 8640, 200, "{}"},
		{"N-001", "2026-08-02", "s1", 8640, 8640, -1500, "{}"},
		{"N-002", "2026-08-02", "s1", 8640, 8640, 200, "{}"},
		{"N-003", "2026-08-02", "s1", 8640, 8640, 200, "{}"},
		{"N-004", "2026-08-02", "s2", 8640, 8640, 200, "{}"},
		{"N-001", "2026-08-03", "s1", 8640, 8640, -1500, "{}"},
		{"N-002", "2026-08-03", "s1", 8640, 8640, 200, "{}"},
		{"N-003", "2026-08-03", "s1", 8640, 8640, 200, "{}"},
		{"N-004", "2026-08-03", "s2", 8640, 8640, 200, "{}"},
	} {
		day, _ := time.Parse(time.DateOnly, r.day)
		closedAt := bst(day.Day()+1, 1, 10)
		testdb.Exec(t, c, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
			min_lag_ms, max_lag_ms, last_received_at, computed_at, silent_hours)
			VALUES ($1, $2, 'north', $3, 8640, $4, $5, 0, 0, $6, 5000, $7, $8, $9)`,
			r.id, r.day, r.shard, r.received, r.available, r.minLag, closedAt.Add(-time.Hour), closedAt, r.silent)
	}
	// farm_window: (day, window index, path, received, available)
	type fw struct {
		day, w              int
		path                string
		received, available int
	}
	var windows []fw
	for w := 0; w < 4; w++ {
		rec, av := 8640, 8640
		switch w {
		case 1:
			av = 6480
		case 3:
			rec, av = 7920, 7920
		}
		windows = append(windows, fw{1, w, "final", rec, av})
		if w == 1 {
			windows = append(windows, fw{1, w, "fast", rec - 216, av - 216})
		} else {
			windows = append(windows, fw{1, w, "fast", rec, av})
		}
		windows = append(windows, fw{2, w, "final", 8640, 8640})
		if w == 1 {
			windows = append(windows, fw{2, w, "fast", 6480, 6480})
		} else {
			windows = append(windows, fw{2, w, "fast", 8640, 8640})
		}
		windows = append(windows, fw{3, w, "final", 8640, 8640})
	}
	windows = append(windows, fw{4, 0, "fast", 8640, 8640}, fw{4, 1, "fast", 4320, 4320})
	for _, r := range windows {
		start := bst(r.day, 6*r.w, 0)
		end := start.Add(6 * time.Hour)
		computed, revision := end.Add(time.Minute), 0 // fast: at its watermark (end + 60 s)
		if r.path == "final" {
			computed, revision = bst(r.day+1, 1, 10), 1
		}
		testdb.Exec(t, c, `INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings,
			computed_at, complete_through, revision) VALUES ('north', $1, $2, $3, $4, 8640, $5, $6, 0, $5, $7, $8, $9)`,
			start, r.path, end, fmt.Sprintf("2026-08-%02d", r.day), r.received, r.available, computed, computed.Add(-time.Minute), revision)
	}
	// reconciliation per day, as the final path measures it.
	testdb.Exec(t, c, `INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available,
		final_expected, final_received, final_available, windows, final_revision, measured_at) VALUES
		('north', 'day', $1, '2026-08-01', 34560, 33624, 31464, 34560, 33840, 31680, 4, 4, $2),
		('north', 'day', $3, '2026-08-02', 34560, 32400, 32400, 34560, 34560, 34560, 4, 4, $4)`,
		bst(1, 0, 0), bst(2, 1, 10), bst(2, 0, 0), bst(3, 1, 10))
	testdb.Exec(t, c, `INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message) VALUES
		('divergence', 'north', 'day', $1, '2026-08-02', $2, 30, '{}', 'test'),
		('completeness', 'north', 'day', $3, '2026-08-01', $4, 10, '{}', 'test')`,
		bst(2, 0, 0), bst(3, 1, 10), bst(1, 0, 0), bst(2, 1, 10))
	// 08-02: a recompute requested (its job not started; the id names no job).
	testdb.Exec(t, c, `INSERT INTO rollup_pending (farm_id, day, shard_name, job_id, requested_at) VALUES ('north', '2026-08-02', 's2', 999999, $1)`, bst(4, 13, 0))
	// 08-03: late readings wait on s2: a mark and three marked windows.
	s2 := env.Shards.Pool("s2")
	testdb.Exec(t, s2, `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
		VALUES ('north', '2026-08-03', '{N-004}', $1, $2, 50, $3, $3)`, bst(3, 6, 0), bst(3, 7, 0), bst(4, 13, 20))
	testdb.Exec(t, c, `INSERT INTO dirty_mark_settling (farm_id, day, shard_name, marked_at, updated_at) VALUES ('north', '2026-08-03', 's2', $1, $1)`, bst(4, 13, 20))
	testdb.Exec(t, c, `INSERT INTO shard_drain (shard_name, drained_through, shard_clock_at, marks_read) VALUES ('s1', $1, $1, 0), ('s2', $1, $1, 1)`,
		statusNow.Add(-5*time.Second))
	for w := 0; w < 3; w++ {
		testdb.Exec(t, s2, `INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, marked_at) VALUES ('north', '2026-08-03', 'N-004', $1, $2, $3)`,
			bst(3, 6*w, 0), bst(3, 6*w+6, 0), bst(4, 13, 25-w))
	}

	cfg := server.DefaultConfig()
	cfg.Token = token
	srv := server.New(env.Control, env.Shards, cfg)
	srv.Now = func() time.Time { return statusNow }
	return statusEnv{env: env, srv: srv, url: serve(t, srv, cfg)}
}

func getJSON(t *testing.T, url string, want int, v any, header ...string) string {
	t.Helper()
	code, body := get(t, url, header...)
	if code != want {
		t.Fatalf("GET %s: %d %s, want %d", url, code, body, want)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, body)
		}
	}
	return body
}

type dayJSON struct {
	Day                 string   `json:"day"`
	Status              string   `json:"status"`
	Why                 string   `json:"why"`
	Source              string   `json:"source"`
	Path                string   `json:"path"`
	Expected            int64    `json:"expected"`
	Received            int64    `json:"received"`
	Available           int64    `json:"available"`
	Availability        *float64 `json:"availability"`
	Completeness        *float64 `json:"completeness"`
	Turbines            *int     `json:"turbines"`
	RegisteredTurbines  *int     `json:"registered_turbines"`
	Windows             int      `json:"windows"`
	WindowsDue          int      `json:"windows_due"`
	FinalWindows        int      `json:"final_windows"`
	Revision            int64    `json:"revision"`
	Pending             bool     `json:"pending"`
	ComputedAt          string   `json:"computed_at"`
	CompleteThrough     string   `json:"complete_through"`
	CompletenessAlert   bool     `json:"completeness_alert"`
	LateReadingsWaiting bool     `json:"late_readings_waiting"`
	Divergence          *struct {
		Windows        int     `json:"windows"`
		FastReceived   int64   `json:"fast_received"`
		FinalReceived  int64   `json:"final_received"`
		FastAvailable  int64   `json:"fast_available"`
		FinalAvailable int64   `json:"final_available"`
		ReceivedPM     float64 `json:"received_pm"`
		AvailablePM    float64 `json:"available_pm"`
		PM             float64 `json:"pm"`
		ThresholdPM    int     `json:"threshold_pm"`
		Alert          bool    `json:"alert"`
	} `json:"divergence"`
}

type daysJSON struct {
	FarmID            string    `json:"farm_id"`
	From              string    `json:"from"`
	To                string    `json:"to"`
	Warranty          float64   `json:"warranty"`
	DivergenceAlertPM int       `json:"divergence_alert_pm"`
	Days              []dayJSON `json:"days"`
}

func intp(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestAPIDays: the days of the month so far, each the monthly report's row
// (counts, rates to six decimals, provenance, status and why, by the
// report's rule) with the day's windows, divergence, alerts and late
// readings still on a shard; then ranges and bad parameters.
func TestAPIDays(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")

	// The default range is the farm-local month to date.
	var got daysJSON
	getJSON(t, e.url+"/api/v1/farms/north/days", 200, &got)
	if got.FarmID != "north" || got.From != "2026-08-01" || got.To != "2026-08-04" || got.Warranty != 0.97 || got.DivergenceAlertPM != 30 || len(got.Days) != 4 {
		t.Fatalf("days: %+v, want north 2026-08-01..2026-08-04, warranty 0.97, threshold 30, 4 days", got)
	}
	type want struct {
		status, why, source, path   string
		expected, received, avail   int64
		availability, completeness  float64
		turbines, registered        string
		windows, finalWindows       int
		revision                    int64
		computedAt, completeThrough time.Time
		pending, completenessAlert  bool
		waiting                     bool
	}
	for i, w := range []want{
		// 720 of 34,560 slots without a reading (20.8 ‰): incomplete.
		{"incomplete", "information unavailable (720 of 34,560 slots without a reading, 2.08 %, over the farm's 10 ‰; until the readings arrive or the day is accepted: orchestrator day accept)", "turbine_day", "final", 34560, 33840, 31680, 0.916667, 0.979167, "4", "4", 4, 4, 4,
			bst(2, 1, 10), bst(2, 1, 10), false, true, false},
		{"provisional", "readings arrived after the rollup (recompute requested 2026-08-04 12:00:00 UTC)", "turbine_day", "final", 34560, 34560, 34560, 1, 1, "4", "4", 4, 4, 4,
			bst(3, 1, 10), bst(3, 1, 10), true, false, false},
		{"provisional", "readings arrived after the rollup (marked on s2 at 2026-08-04 12:20:00 UTC, settling)", "turbine_day", "final", 34560, 34560, 34560, 1, 1, "4", "4", 4, 4, 4,
			bst(4, 1, 10), bst(4, 1, 10), true, false, true},
		{"provisional", "not ended", "farm_window", "fast", 17280, 12960, 12960, 0.75, 0.75, "null", "null", 2, 0, 0,
			bst(4, 12, 1), bst(4, 6, 0), false, false, false},
	} {
		d := got.Days[i]
		day := fmt.Sprintf("2026-08-%02d", i+1)
		if d.Day != day || d.Status != w.status || d.Why != w.why || d.Source != w.source || d.Path != w.path ||
			d.Expected != w.expected || d.Received != w.received || d.Available != w.avail ||
			d.Availability == nil || *d.Availability != w.availability || d.Completeness == nil || *d.Completeness != w.completeness ||
			intp(d.Turbines) != w.turbines || intp(d.RegisteredTurbines) != w.registered ||
			d.Windows != w.windows || d.FinalWindows != w.finalWindows || d.Revision != w.revision || d.Pending != w.pending ||
			d.ComputedAt != w.computedAt.UTC().Format(time.RFC3339) || d.CompleteThrough != w.completeThrough.UTC().Format(time.RFC3339) ||
			d.CompletenessAlert != w.completenessAlert || d.LateReadingsWaiting != w.waiting {
			t.Errorf("day %s: %+v\nwant %+v", day, d, w)
		}
	}
	// Divergence, measured for 08-01 (below the threshold) and 08-02 (above: an alert).
	for i, w := range []struct {
		pm, recPM, availPM             float64
		alert                          bool
		fastRec, finalRec, fastAv, fAv int64
	}{
		{6.818, 6.383, 6.818, false, 33624, 33840, 31464, 31680},
		{62.5, 62.5, 62.5, true, 32400, 34560, 32400, 34560},
	} {
		d := got.Days[i].Divergence
		if d == nil || d.PM != w.pm || d.ReceivedPM != w.recPM || d.AvailablePM != w.availPM || d.ThresholdPM != 30 || d.Alert != w.alert ||
			d.Windows != 4 || d.FastReceived != w.fastRec || d.FinalReceived != w.finalRec || d.FastAvailable != w.fastAv || d.FinalAvailable != w.fAv {
			t.Errorf("day %s divergence: %+v, want %+v", got.Days[i].Day, d, w)
		}
	}
	for _, d := range got.Days[2:] {
		if d.Divergence != nil {
			t.Errorf("day %s: divergence %+v, want none measured", d.Day, *d.Divergence)
		}
	}

	t.Run("Range", func(t *testing.T) {
		var got daysJSON
		getJSON(t, e.url+"/api/v1/farms/north/days?from=2026-08-02&to=2026-08-03", 200, &got)
		if len(got.Days) != 2 || got.Days[0].Day != "2026-08-02" || got.Days[1].Day != "2026-08-03" {
			t.Fatalf("days 08-02..08-03: %+v", got.Days)
		}
		// A year at most; July has no numbers: an empty list, not an error.
		getJSON(t, e.url+"/api/v1/farms/north/days?from=2025-08-04&to=2026-08-04", 200, &got)
		if len(got.Days) != 4 {
			t.Fatalf("366 days: %d days, want 4", len(got.Days))
		}
		getJSON(t, e.url+"/api/v1/farms/north/days?from=2026-07-01&to=2026-07-31", 200, &got)
		if got.Days == nil || len(got.Days) != 0 {
			t.Fatalf("July: %+v, want an empty list", got.Days)
		}
		// to alone: from is the first of to's month.
		getJSON(t, e.url+"/api/v1/farms/north/days?to=2026-08-02", 200, &got)
		if got.From != "2026-08-01" || len(got.Days) != 2 {
			t.Fatalf("to=2026-08-02: from %s, %d days, want 2026-08-01, 2", got.From, len(got.Days))
		}
	})

	t.Run("BadParameters", func(t *testing.T) {
		for _, tc := range []struct{ query, param string }{
			{"from=2026-8-1", "from"},
			{"from=yesterday", "from"},
			{"to=2026-02-30", "to"},
			{"to=", "to"},
			{"from=%ff%00", "from"},
			{"from=2026-08-05&to=2026-08-04", "from"},
			{"from=2025-08-03&to=2026-08-04", "to"}, // 367 days
			{"from=1969-12-31&to=1970-01-01", "from"},
		} {
			var e400 struct{ Error, Parameter string }
			getJSON(t, e.url+"/api/v1/farms/north/days?"+tc.query, 400, &e400)
			if e400.Parameter != tc.param || !strings.HasPrefix(e400.Error, tc.param+": ") {
				t.Errorf("?%s: %+v, want 400 naming %q", tc.query, e400, tc.param)
			}
		}
		var e404 struct{ Error, Parameter string }
		getJSON(t, e.url+"/api/v1/farms/nowhere/days", 404, &e404)
		if e404.Parameter != "id" || e404.Error != `unknown farm "nowhere"` {
			t.Errorf("unknown farm: %+v", e404)
		}
		var e400 struct{ Error, Parameter string }
		getJSON(t, e.url+"/api/v1/farms/%ff/days", 400, &e400)
		if e400.Parameter != "id" {
			t.Errorf("id with a byte that is not UTF-8: %+v, want 400 naming id", e400)
		}
	})
}

func TestAPIFarmsAndTile(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")

	var farms struct {
		Farms []struct {
			ID, Name, Timezone, Today string
			Turbines                  int
			Shards                    []string
			WindowS                   int `json:"window_s"`
			AllowedLatenessS          int `json:"allowed_lateness_s"`
			DivergenceAlertPM         int `json:"divergence_alert_pm"`
			Freshness                 struct {
				Published        bool
				PublishedThrough time.Time `json:"published_through"`
				BehindS          *float64  `json:"behind_s"`
			}
		}
	}
	getJSON(t, e.url+"/api/v1/farms", 200, &farms)
	if len(farms.Farms) != 2 {
		t.Fatalf("farms: %+v, want north and south", farms)
	}
	n, s := farms.Farms[0], farms.Farms[1]
	// north's latest fast window ends 08-04 12:00 BST, published at 12:01 (watermark 12:00): 1 h 30 m behind at 13:30.
	if n.ID != "north" || n.Name != "North Point" || n.Timezone != "Europe/London" || n.Today != "2026-08-04" || n.Turbines != 4 ||
		strings.Join(n.Shards, ",") != "s1,s2" || n.WindowS != 21600 || n.AllowedLatenessS != 60 || n.DivergenceAlertPM != 30 ||
		!n.Freshness.Published || !n.Freshness.PublishedThrough.Equal(bst(4, 12, 0)) || n.Freshness.BehindS == nil || *n.Freshness.BehindS != 5400 {
		t.Errorf("north: %+v", n)
	}
	if s.ID != "south" || s.Today != "2026-08-04" || s.Turbines != 1 || s.Freshness.Published || s.Freshness.BehindS != nil {
		t.Errorf("south: %+v", s)
	}

	var tile struct {
		FarmID    string `json:"farm_id"`
		Published bool
		Window    *struct {
			Start, End                    time.Time
			Path                          string
			Expected, Received, Available int64
			Availability, Completeness    *float64
			ComputedAt                    time.Time `json:"computed_at"`
			CompleteThrough               time.Time `json:"complete_through"`
			Pending                       bool
		}
		Backlog struct {
			MarkedDays     []string   `json:"marked_days"`
			MarkReadings   int64      `json:"mark_readings"`
			DirtyWindows   int64      `json:"dirty_windows"`
			OldestMark     *time.Time `json:"oldest_mark"`
			OldestMarkAgeS *float64   `json:"oldest_mark_age_s"`
			Requests       int
			OldestRequest  *time.Time `json:"oldest_request"`
			ShardsFailed   []string   `json:"shards_failed"`
		}
	}
	getJSON(t, e.url+"/api/v1/farms/north/tile", 200, &tile)
	w := tile.Window
	if !tile.Published || w == nil || !w.Start.Equal(bst(4, 6, 0)) || !w.End.Equal(bst(4, 12, 0)) || w.Path != "fast" ||
		w.Expected != 8640 || w.Received != 4320 || w.Available != 4320 || *w.Availability != 0.5 || *w.Completeness != 0.5 ||
		!w.ComputedAt.Equal(bst(4, 12, 1)) || !w.CompleteThrough.Equal(bst(4, 12, 0)) || w.Pending {
		t.Errorf("north tile window: %+v, want 06:00-12:00 fast 4,320 of 8,640", w)
	}
	b := tile.Backlog
	// The oldest of the mark (13:20) and the marked windows (13:23-13:25).
	if strings.Join(b.MarkedDays, ",") != "2026-08-03" || b.MarkReadings != 50 || b.DirtyWindows != 3 ||
		b.OldestMark == nil || !b.OldestMark.Equal(bst(4, 13, 20)) || b.OldestMarkAgeS == nil || *b.OldestMarkAgeS != 600 ||
		b.Requests != 1 || b.OldestRequest == nil || !b.OldestRequest.Equal(bst(4, 13, 0)) || len(b.ShardsFailed) != 0 {
		t.Errorf("north backlog: %+v", b)
	}
	body := getJSON(t, e.url+"/api/v1/farms/south/tile", 200, &tile)
	if tile.Published || tile.Window != nil || len(tile.Backlog.MarkedDays) != 0 || tile.Backlog.Requests != 0 {
		t.Errorf("south tile: %s, want nothing published and no backlog", body)
	}
	getJSON(t, e.url+"/api/v1/farms/nowhere/tile", 404, nil)
}

// TestAPINeedsTheToken: with a token every page and API route answers 401
// without it, and the token opens them.
func TestAPINeedsTheToken(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, testToken)
	for _, path := range []string{"/", "/farms/north", "/farms/north/days/2026-08-01", "/api/v1/farms", "/api/v1/farms/north/tile", "/api/v1/farms/north/days", "/api/v1/farms/nowhere/days"} {
		if code, body := get(t, e.url+path); code != 401 || strings.Contains(body, "North") {
			t.Errorf("GET %s without the token: %d %.80q, want 401", path, code, body)
		}
		want := 200
		if strings.Contains(path, "nowhere") {
			want = 404
		}
		if code, _ := get(t, e.url+path, "Authorization", "Bearer "+testToken); code != want {
			t.Errorf("GET %s with the token: %d, want %d", path, code, want)
		}
	}
}

// element returns the first element of page with the given id attribute
// (its whole text up to the closing tag).
func element(t *testing.T, page, tag, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<` + tag + `[^>]*\bid="` + regexp.QuoteMeta(id) + `"[^>]*>.*?</` + tag + `>`).FindString(page)
	if m == "" {
		t.Fatalf("no <%s id=%q> in the page", tag, id)
	}
	return m
}

func cell(t *testing.T, row, class string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<td class="` + class + `"[^>]*>(.*?)</td>`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("no <td class=%q> in %s", class, row)
	}
	return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], " ")), " ")
}

// TestPagesShowTheAPIsNumbers: the farm page's day rows carry the numbers
// the days API returns (rates to two decimals, counts grouped), a
// provisional day is labelled so, and the charts have a bar per day with
// a number (availability) and per day measured (divergence).
func TestPagesShowTheAPIsNumbers(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	var api daysJSON
	getJSON(t, e.url+"/api/v1/farms/north/days?from=2026-08-01&to=2026-08-31", 200, &api)
	code, page := get(t, e.url+"/farms/north?month=2026-08")
	if code != 200 {
		t.Fatalf("farm page: %d", code)
	}
	pct := func(r *float64) string { return fmt.Sprintf("%.2f %%", *r*100) }
	for _, d := range api.Days {
		row := element(t, page, "tr", "day-"+d.Day)
		for class, want := range map[string]string{
			"availability": pct(d.Availability), "completeness": pct(d.Completeness),
			"expected": group(d.Expected), "received": group(d.Received), "available": group(d.Available),
			"l status": d.Status, "revision": fmt.Sprint(d.Revision),
		} {
			if got := cell(t, row, class); !strings.HasPrefix(got, want) {
				t.Errorf("day %s %s: page %q, API %q", d.Day, class, got, want)
			}
		}
		if d.Divergence != nil {
			if got, want := cell(t, row, "divergence"), fmt.Sprintf("%.2f ‰", d.Divergence.PM); !strings.HasPrefix(got, want) {
				t.Errorf("day %s divergence: page %q, API %q", d.Day, got, want)
			}
		}
	}
	// The exact values, once, so a formatting change that both sides share is still caught.
	if got := cell(t, element(t, page, "tr", "day-2026-08-01"), "availability"); got != "91.67 %" {
		t.Errorf("08-01 availability on the page: %q, want 91.67 %%", got)
	}
	for day, want := range map[string]string{
		"2026-08-01": "incomplete completeness alert information unavailable (720 of 34,560 slots without a reading, 2.08 %, over the farm's 10 ‰; until the readings arrive or the day is accepted: orchestrator day accept)",
		"2026-08-02": "provisional pending readings arrived after the rollup (recompute requested 2026-08-04 12:00:00 UTC)",
		"2026-08-03": "provisional pending readings arrived after the rollup (marked on s2 at 2026-08-04 12:20:00 UTC, settling) late readings wait on a shard for the drain",
		"2026-08-04": "provisional not ended",
	} {
		if got := strings.Join(strings.Fields(html.UnescapeString(cell(t, element(t, page, "tr", "day-"+day), "l status"))), " "); got != want {
			t.Errorf("%s status on the page: %q, want %q", day, got, want)
		}
	}
	month := html.UnescapeString(element(t, page, "div", "month-north"))
	for _, want := range []string{`<span class="badge provisional">provisional</span>`, `<b class="month-availability">94.05 %</b>`, `<b class="month-completeness">95.83 %</b>`,
		"113,760 available, 115,920 received of 120,960 expected", "held back: not ended: 2026-08-04..2026-08-31; readings arrived after the rollup: 2026-08-02..2026-08-03",
	} {
		if !strings.Contains(month, want) {
			t.Errorf("the month line lacks %q: %s", want, month)
		}
	}
	if !strings.Contains(page, "late readings wait on a shard for the drain: 2026-08-03") {
		t.Error("the month does not say that late readings of 08-03 wait on a shard")
	}
	for id, want := range map[string][2]int{"availability-north": {4, 4}, "divergence-north": {2, 0}} {
		svg := element(t, page, "svg", id)
		bars := strings.Count(svg, `<rect class="bar `)
		points := strings.Count(svg, `<circle class="point `)
		if bars != want[0] || points != want[1] {
			t.Errorf("chart %s: %d bars and %d points, want %d and %d", id, bars, points, want[0], want[1])
		}
	}
	if n := strings.Count(element(t, page, "svg", "availability-north"), `class="bar availability provisional"`); n != 3 {
		t.Errorf("%d hatched (provisional) availability bars, want 3 (08-02, 08-03, 08-04)", n)
	}
	if n := strings.Count(element(t, page, "svg", "availability-north"), `class="bar availability incomplete"`); n != 1 {
		t.Errorf("%d incomplete availability bars, want 1 (08-01)", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("the page loads a script or names another site")
	}

	t.Run("Overview", func(t *testing.T) {
		code, page := get(t, e.url+"/?month=2026-08")
		if code != 200 {
			t.Fatalf("overview: %d", code)
		}
		for _, want := range []string{`id="farm-north"`, `id="farm-south"`, `data-chart="availability" data-bars="4"`, `data-chart="divergence" data-bars="2"`,
			`<span class="v tile-availability">50.00 %</span>`, `<span class="v freshness">1 h 30 m</span>`, `<span class="v backlog">1 day</span>`, `<span class="v dirty-windows">3</span>`,
			`<span class="v oldest-mark">10 m 00 s</span>`, "nothing published yet"} {
			if !strings.Contains(page, want) {
				t.Errorf("overview lacks %q", want)
			}
		}
		// Without ?month= each farm shows its farm-local current month.
		if _, page := get(t, e.url+"/"); !strings.Contains(page, `data-chart="availability" data-bars="4"`) {
			t.Error("the default month is not August 2026")
		}
	})

	t.Run("Day", func(t *testing.T) {
		code, page := get(t, e.url+"/farms/north/days/2026-08-01")
		if code != 200 {
			t.Fatalf("day page: %d", code)
		}
		if n := strings.Count(page, `<tr class="turbine"`); n != 4 {
			t.Errorf("%d turbine rows, want 4", n)
		}
		for id, want := range map[string][]string{
			"turbine-N-001": {"+1.500 s"},
			"turbine-N-002": {"91.67 %", "22–23", `class="hour silent"`},
			"turbine-N-003": {"75.00 %", "none"},
		} {
			row := html.UnescapeString(element(t, page, "tr", id))
			for _, w := range want {
				if !strings.Contains(row, w) {
					t.Errorf("%s lacks %q: %s", id, w, row)
				}
			}
		}
		if n := strings.Count(element(t, page, "tr", "turbine-N-002"), `class="hour silent"`); n != 2 {
			t.Errorf("N-002's strip has %d silent hours, want 2", n)
		}
		if !strings.Contains(page, `<span class="badge incomplete" id="day-status">incomplete</span>`) {
			t.Error("08-01 is not labelled incomplete")
		}
		if !strings.Contains(html.UnescapeString(page), "Incomplete: information unavailable (720 of 34,560 slots without a reading") {
			t.Error("08-01's page does not say why it is incomplete")
		}
		_, page = get(t, e.url+"/farms/north/days/2026-08-04")
		if !strings.Contains(page, `<span class="badge provisional" id="day-status">provisional</span>`) || !strings.Contains(page, "Provisional: not ended.") {
			t.Error("08-04 is not labelled provisional, not ended")
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for path, want := range map[string]int{
			"/?month=2026-13":                 400,
			"/farms/north?month=august":       400,
			"/farms/nowhere":                  404,
			"/farms/north/days/2026-08-32":    400,
			"/farms/nowhere/days/2026-08-01":  404,
			"/no-such-page":                   404,
			"/farms/north/days/2026-08-01/xx": 404,
		} {
			code, body := get(t, e.url+path)
			if code != want {
				t.Errorf("GET %s: %d, want %d", path, code, want)
			}
			if want == 400 && !strings.Contains(body, "month: want a month YYYY-MM from 1970 on") && !strings.Contains(body, "day: want a date YYYY-MM-DD from 1970 on") {
				t.Errorf("GET %s: the page does not name the parameter: %s", path, body)
			}
		}
	})
}

func group(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestAPIMonth: the monthly report as JSON (internal/report), judged by the
// server's clock; its total from the summed counts of the days with
// numbers; 400 naming the month, 404 for an unknown farm.
func TestAPIMonth(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	var m struct {
		FarmID        string `json:"farm_id"`
		Month, Status string
		Days          []dayJSON
		Total         dayJSON
		HeldBack      []struct{ Day, Reason string } `json:"held_back"`
	}
	getJSON(t, e.url+"/api/v1/farms/north/months/2026-08", 200, &m)
	if m.FarmID != "north" || m.Month != "2026-08" || m.Status != "provisional" || len(m.Days) != 31 {
		t.Fatalf("month: %s %s %s, %d days; want north 2026-08 provisional, 31 days", m.FarmID, m.Month, m.Status, len(m.Days))
	}
	tot := m.Total
	if tot.Day != "total" || tot.Expected != 120960 || tot.Received != 115920 || tot.Available != 113760 ||
		*tot.Availability != 0.940476 || *tot.Completeness != 0.958333 || tot.Source != "partial" || tot.Path != "partial" ||
		tot.Why != "not ended: 2026-08-04..2026-08-31; readings arrived after the rollup: 2026-08-02..2026-08-03; information unavailable: 2026-08-01" {
		t.Errorf("total: %+v", tot)
	}
	if len(m.HeldBack) != 31 || m.HeldBack[0].Day != "2026-08-01" || m.HeldBack[1].Day != "2026-08-02" || m.HeldBack[2].Day != "2026-08-03" || m.HeldBack[3].Day != "2026-08-04" || m.HeldBack[3].Reason != "not ended" {
		t.Errorf("held back: %+v, want 08-01 (incomplete), 08-02, 08-03 and 08-04..08-31", m.HeldBack)
	}
	// The days API shows the same rows.
	var days daysJSON
	getJSON(t, e.url+"/api/v1/farms/north/days?from=2026-08-01&to=2026-08-31", 200, &days)
	for _, d := range days.Days {
		var r dayJSON
		for _, x := range m.Days {
			if x.Day == d.Day {
				r = x
			}
		}
		if r.Status != d.Status || r.Why != d.Why || r.Expected != d.Expected || *r.Availability != *d.Availability || r.ComputedAt != d.ComputedAt {
			t.Errorf("day %s: report %+v, days API %+v", d.Day, r, d)
		}
	}

	for _, tc := range []struct {
		path, param string
		code        int
	}{
		{"/api/v1/farms/north/months/2026-13", "month", 400},
		{"/api/v1/farms/north/months/august", "month", 400},
		{"/api/v1/farms/north/months/1969-12", "month", 400},
		{"/api/v1/farms/nowhere/months/2026-08", "id", 404},
		{"/api/v1/farms/%ff/months/2026-08", "id", 400},
	} {
		var e4 struct{ Error, Parameter string }
		getJSON(t, e.url+tc.path, tc.code, &e4)
		if e4.Parameter != tc.param {
			t.Errorf("GET %s: %+v, want %d naming %s", tc.path, e4, tc.code, tc.param)
		}
	}
}

// TestAStalledTurbineIsOnItsFarmsTile: an open stall of N-002 (since 12:00
// UTC, 13:00 in London) shows on north's tile as a badge and in the tile's
// JSON; a cleared one (N-001) and south show none.
func TestAStalledTurbineIsOnItsFarmsTile(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	since := time.Date(2026, 8, 4, 12, 0, 0, 0, time.UTC)
	testdb.Exec(t, e.env.Control, `INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, windows, raised_at, cleared_at, detail, message)
		VALUES ('north', 'N-002', $1::timestamptz, $1::timestamptz + interval '2 minutes', 3, $1::timestamptz + interval '2 minutes', NULL, '{}', 'N-002 stalled: test'),
		       ('north', 'N-001', $1::timestamptz, $1::timestamptz, 1, $1::timestamptz + interval '2 minutes', $1::timestamptz + interval '3 minutes', '{}', 'N-001 stalled: test')`, since)
	var tile struct {
		Stalled []struct {
			TurbineID string    `json:"turbine_id"`
			Since     time.Time `json:"since"`
			Windows   int       `json:"windows"`
		} `json:"stalled"`
	}
	getJSON(t, e.url+"/api/v1/farms/north/tile", 200, &tile)
	if len(tile.Stalled) != 1 || tile.Stalled[0].TurbineID != "N-002" || !tile.Stalled[0].Since.Equal(since) || tile.Stalled[0].Windows != 3 {
		t.Fatalf("north's tile: stalled %+v, want N-002 since %s over 3 windows", tile.Stalled, since)
	}
	_, page := get(t, e.url+"/?month=2026-08")
	north := element(t, page, "section", "farm-north")
	if !strings.Contains(north, `data-turbine="N-002" title="N-002 stalled: test">stalled: N-002 since 13:00</span>`) || strings.Contains(north, `data-turbine="N-001"`) {
		t.Fatalf("north's section lacks N-002's stall badge (or shows the cleared N-001):\n%s", north)
	}
	if strings.Contains(element(t, page, "section", "farm-south"), "stalled:") {
		t.Error("south shows a stall")
	}
}

// TestAPIContractYear: the contract year report as JSON (internal/report),
// judged by the server's clock (4 August 2026): north counts by the default
// contract, whose year is the calendar year: 2026-01-01 to 2026-12-31, the
// months January to August begun, provisional (August has not ended); 400
// naming the year, 404 for an unknown farm.
func TestAPIContractYear(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	var y struct {
		FarmID string `json:"farm_id"`
		Year   string
		Months []struct {
			FirstDay string `json:"first_day"`
			Status   string
		}
		Total struct {
			FirstDay string `json:"first_day"`
			LastDay  string `json:"last_day"`
			Status   string
		} `json:"year_to_date"`
	}
	getJSON(t, e.url+"/api/v1/farms/north/contract-years/2026", 200, &y)
	if y.FarmID != "north" || y.Year != "2026" || y.Total.FirstDay != "2026-01-01" || y.Total.LastDay != "2026-12-31" ||
		y.Total.Status != "provisional" || len(y.Months) != 8 || y.Months[7].FirstDay != "2026-08-01" {
		t.Fatalf("contract year: %+v; want north 2026, 2026-01-01 to 2026-12-31, provisional, 8 months to August", y)
	}
	for _, tc := range []struct {
		path, param string
		code        int
	}{
		{"/api/v1/farms/north/contract-years/26", "year", 400},
		{"/api/v1/farms/north/contract-years/twenty", "year", 400},
		{"/api/v1/farms/nowhere/contract-years/2026", "id", 404},
	} {
		var e4 struct{ Error, Parameter string }
		getJSON(t, e.url+tc.path, tc.code, &e4)
		if e4.Parameter != tc.param {
			t.Errorf("GET %s: %+v, want %d naming %s", tc.path, e4, tc.code, tc.param)
		}
	}
}
