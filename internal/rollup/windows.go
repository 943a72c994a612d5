package rollup

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Grid is the window grid of one farm-local day: windows of Window from
// the day's start, the last one cut at the day's end. The bounds come from
// the control database (FarmDayGet); this only counts.
type Grid struct {
	FarmID     string
	Day        time.Time // the date (midnight UTC, as pgx gives a DATE)
	Start, End time.Time
	Window     time.Duration
}

// Len is the number of windows in the day.
func (g Grid) Len() int {
	return int((g.End.Sub(g.Start) + g.Window - 1) / g.Window)
}

// Bounds returns window i's start and end.
func (g Grid) Bounds(i int) (time.Time, time.Time) {
	s := g.Start.Add(time.Duration(i) * g.Window)
	e := s.Add(g.Window)
	if e.After(g.End) {
		e = g.End
	}
	return s, e
}

// Closed is how many windows of the day have passed the watermark at now
// (end + lateness <= now): only those get final rows.
func (g Grid) Closed(now time.Time, lateness time.Duration) int {
	n := 0
	for i := 0; i < g.Len(); i++ {
		if _, e := g.Bounds(i); e.Add(lateness).After(now) {
			break
		}
		n++
	}
	return n
}

// Before is how many windows of the day start before t.
func (g Grid) Before(t time.Time) int {
	if !t.After(g.Start) {
		return 0
	}
	return min(g.Len(), int((t.Sub(g.Start)+g.Window-1)/g.Window))
}

// Starts returns the starts of windows [from, to).
func (g Grid) Starts(from, to int) []time.Time {
	out := make([]time.Time, 0, to-from)
	for i := from; i < to; i++ {
		s, _ := g.Bounds(i)
		out = append(out, s)
	}
	return out
}

// Turbine is what a window computation needs of one turbine.
type Turbine struct {
	ID          string
	Cadence     int32
	ServiceFrom time.Time
	ServiceTo   time.Time
}

// TurbinesOf converts the control database's rows.
func TurbinesOf(rows []controldb.TurbineRollupListRow) []Turbine {
	out := make([]Turbine, 0, len(rows))
	for _, t := range rows {
		tt := Turbine{ID: t.ID, Cadence: t.CadenceSeconds, ServiceFrom: serviceStart, ServiceTo: serviceEnd}
		if t.CommissionedAt != nil {
			tt.ServiceFrom = *t.CommissionedAt
		}
		if t.DecommissionedAt != nil {
			tt.ServiceTo = *t.DecommissionedAt
		}
		out = append(out, tt)
	}
	return out
}

// Pairs is a set of (turbine, window index) to compute.
type Pairs map[string]map[int]struct{}

// Add puts (turbine, window) in the set.
func (p Pairs) Add(turbine string, window int) {
	if p[turbine] == nil {
		p[turbine] = map[int]struct{}{}
	}
	p[turbine][window] = struct{}{}
}

// AddRange puts windows [from, to) of each turbine in the set.
func (p Pairs) AddRange(turbines []Turbine, from, to int) {
	for _, t := range turbines {
		for i := from; i < to; i++ {
			p.Add(t.ID, i)
		}
	}
}

// Len is how many (turbine, window) pairs the set holds.
func (p Pairs) Len() int {
	n := 0
	for _, ws := range p {
		n += len(ws)
	}
	return n
}

// Windows returns the distinct window indexes in the set, sorted.
func (p Pairs) Windows() []int {
	seen := map[int]struct{}{}
	for _, ws := range p {
		for w := range ws {
			seen[w] = struct{}{}
		}
	}
	out := make([]int, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Ints(out)
	return out
}

// Turbines returns the turbines in the set, sorted.
func (p Pairs) Turbines() []string {
	out := make([]string, 0, len(p))
	for t := range p {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// UpsertParams turns the set into the shard statement's runs: per turbine,
// maximal runs of consecutive windows, each read as one key range.
func (p Pairs) UpsertParams(g Grid, turbines []Turbine, rules fleet.Rules, computedAt time.Time) sharddb.TurbineWindowUpsertParams {
	args := sharddb.TurbineWindowUpsertParams{
		DayStart: g.Start, DayEnd: g.End, WindowS: int32(g.Window / time.Second),
		LaneThresholdSeconds: rules.LaneThreshold.Seconds(), EarlyToleranceSeconds: rules.EarlyTolerance.Seconds(),
		FarmID: g.FarmID, Day: g.Day, ComputedAt: computedAt,
	}
	for _, t := range turbines {
		set := p[t.ID]
		if len(set) == 0 {
			continue
		}
		ws := make([]int, 0, len(set))
		for w := range set {
			ws = append(ws, w)
		}
		sort.Ints(ws)
		for i := 0; i < len(ws); {
			j := i
			for j+1 < len(ws) && ws[j+1] == ws[j]+1 {
				j++
			}
			args.TurbineIds = append(args.TurbineIds, t.ID)
			args.CadenceSeconds = append(args.CadenceSeconds, t.Cadence)
			args.ServiceFrom = append(args.ServiceFrom, t.ServiceFrom)
			args.ServiceTo = append(args.ServiceTo, t.ServiceTo)
			args.FirstWindow = append(args.FirstWindow, int32(ws[i]))
			args.LastWindow = append(args.LastWindow, int32(ws[j]))
			i = j + 1
		}
	}
	return args
}

// ShardWork is what one shard computation of windows did.
type ShardWork struct {
	Windows  int64 // turbine_window rows written
	RowsRead int64 // readings counted
	Sums     []sharddb.FarmWindowSumsRow
	// SumsDiffered is, when the day's farm_window_sum rows were rebuilt,
	// how many of them differed from turbine_window (a bug: 0 expected),
	// and FirstDiffered the first such window.
	SumsDiffered  int64
	FirstDiffered time.Time
	// NotWhole lists the windows, of those whose sums were asked for, that
	// the shard does not have a turbine_window row of for every turbine of
	// the farm here (set by a correction only; see splitWhole).
	NotWhole []time.Time
}

// splitWhole splits a shard's sums into those of windows it has whole (at
// least wholeAt turbine_window rows summed, all of the window: of the
// farm's current grid; every window when wholeAt is 0) and the starts of
// the others.
//
// A correction recomputes the turbine-windows its marks name, and must
// fill in every turbine of a window this shard has not computed whole yet
// (the fast path did not publish it, or a job that died between its
// control and shard commits left a part on the control database whose
// rows do not exist here), or the part would sum a window short of the
// turbines it had. After a window rule change, a turbine's row of the old
// grid can start where a window of the new one starts (12:00-12:01 beside
// 12:00-12:10): the sum counts it, but its length is not the window's, so
// the window is not whole either, and filling it in recomputes that
// turbine's row on the new grid. The sums the window statement returns
// say it, as the statement left them, in the same transaction: no read
// before the compute (that was a 1,440-window query, 2.2 ms of a
// one-turbine correction's 68).
func splitWhole(sums []sharddb.FarmWindowSumsRow, wholeAt int) ([]sharddb.FarmWindowSumsRow, []time.Time) {
	if wholeAt <= 0 {
		return sums, nil
	}
	short := func(s sharddb.FarmWindowSumsRow) bool {
		// the sum's window_end is its last writer's: this grid's
		return int(s.Turbines) < wholeAt || s.SpanS != int64(s.Turbines)*int64(s.WindowEnd.Sub(s.WindowStart)/time.Second)
	}
	i := slices.IndexFunc(sums, short)
	if i < 0 {
		return sums, nil // the usual case: nothing copied
	}
	whole := slices.Clone(sums[:i])
	var out []time.Time
	for _, s := range sums[i:] {
		if short(s) {
			out = append(out, s.WindowStart)
		} else {
			whole = append(whole, s)
		}
	}
	return whole, out
}

// ComputeWindows computes the pairs' turbine_window rows on a shard (inside
// the caller's shard transaction, after WindowLock) and returns the
// shard's sums of the given windows. With rebuildSums (closing a day), the
// day's farm_window_sum rows are first rebuilt from turbine_window and the
// windows that differed counted.
func ComputeWindows(ctx context.Context, sq *sharddb.Queries, g Grid, turbines []Turbine, rules fleet.Rules, pairs Pairs, sumWindows []int, rebuildSums bool, now time.Time) (ShardWork, error) {
	var w ShardWork
	// The sums of the windows just written, as the upsert left them.
	written := map[int64]sharddb.FarmWindowSumsRow{}
	if len(pairs) > 0 {
		rows, err := sq.TurbineWindowUpsert(ctx, pairs.UpsertParams(g, turbines, rules, now))
		if err != nil {
			return w, fmt.Errorf("compute windows: %w", err)
		}
		for _, r := range rows {
			w.Windows, w.RowsRead = r.Windows, r.RowsRead
			written[r.WindowStart.Unix()] = sharddb.FarmWindowSumsRow{
				WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, Day: r.Day, Turbines: r.Turbines, Expected: r.Expected, Received: r.Received,
				Available: r.Available, Late: r.Late, Readings: r.Readings, SpanS: r.SpanS, ShardXid: r.ShardXid,
			}
		}
	}
	if rebuildSums {
		res, err := sq.FarmWindowSumRebuild(ctx, sharddb.FarmWindowSumRebuildParams{FarmID: g.FarmID, Day: g.Day, DayStart: g.Start, DayEnd: g.End})
		if err != nil {
			return w, fmt.Errorf("rebuild window sums: %w", err)
		}
		w.SumsDiffered, w.FirstDiffered = res.Differed, res.FirstWindow
		written = nil // the rebuild may have changed them
	}
	if len(sumWindows) > 0 {
		starts := make([]time.Time, 0, len(sumWindows))
		sums := make([]sharddb.FarmWindowSumsRow, 0, len(sumWindows))
		for _, i := range sumWindows {
			s, _ := g.Bounds(i)
			starts = append(starts, s)
			if r, ok := written[s.Unix()]; ok {
				sums = append(sums, r)
			}
		}
		if len(sums) < len(starts) {
			// Some window was not written here (closing a day sums every
			// window; only the missing ones were computed): read them all.
			var err error
			if sums, err = sq.FarmWindowSums(ctx, sharddb.FarmWindowSumsParams{FarmID: g.FarmID, WindowStarts: starts}); err != nil {
				return w, fmt.Errorf("window sums: %w", err)
			}
		}
		w.Sums = sums
	}
	return w, nil
}

// PartParams turns a shard's sums into the control database's part upsert.
func PartParams(farm, shard string, sums []sharddb.FarmWindowSumsRow, computedAt time.Time) controldb.FarmWindowPartUpsertParams {
	p := controldb.FarmWindowPartUpsertParams{FarmID: farm, ShardName: shard, ComputedAt: computedAt}
	for _, s := range sums {
		p.ShardXid = s.ShardXid
		p.WindowStarts = append(p.WindowStarts, s.WindowStart)
		p.WindowEnds = append(p.WindowEnds, s.WindowEnd)
		p.Days = append(p.Days, s.Day)
		p.Expected = append(p.Expected, s.Expected)
		p.Received = append(p.Received, s.Received)
		p.Available = append(p.Available, s.Available)
		p.Late = append(p.Late, s.Late)
		p.Readings = append(p.Readings, s.Readings)
	}
	return p
}

// Within returns the pairs whose window lies in [from, to].
func (p Pairs) Within(from, to int) Pairs {
	out := Pairs{}
	for t, ws := range p {
		for w := range ws {
			if w >= from && w <= to {
				out.Add(t, w)
			}
		}
	}
	return out
}

// A large correction is computed on the shard in ranges of windows, one
// after the other, and each range's control writes (parts, final rows,
// reconciliation) run while the shard computes the next. Only the last
// range's control writes are not overlapped, so the ranges shrink: each
// is overlapShrink of the one before, as long as the last keeps
// overlapMinWindows windows, and there are at most overlapMaxRanges of
// them. One turbine's day (1,440 windows) is 4 ranges (614, 399, 259,
// 168 windows). The shrink follows what the control database's writes
// cost against the shard's: at first 0.72 of them a window (19-20 against
// 26-29 us, measured on the benchmark's farm), so 0.75, 527 to 222
// windows (at 0.7 the shard waited for them, 1 ms a range); once each
// range reconciled only its own windows and the shard stopped planning
// each range (generic plans), 0.65 did better: one turbine's correction
// took 48.1-50.8 ms against 50.2-54.6 at 0.75 (medians of 30, five
// alternating triples with 5 ranges at 0.75: 48.8-52.1), its last
// range's writes, left after the shard, 168 windows instead of 222. A
// correction too small to split (under 280 windows) is written after the
// shard's reads, as before: the extra statements would cost more than the
// overlap saves. Since the ranges are shared by two shard sessions
// (computeOverlapped), the same four measured as well as six of 240
// windows, or ascending, or seven (within the noise of 40 alternating
// runs each).
const (
	overlapMinWindows = 110
	overlapMaxRanges  = 4
	overlapShrink     = 0.65
)

// overlapRanges splits the sorted windows a correction writes into the
// ranges computed one after the other (each a run of the list), or nil
// when the correction is too small to be split.
func overlapRanges(windows []int) [][]int {
	n := len(windows)
	for k := overlapMaxRanges; k >= 2; k-- {
		// sizes first, first*shrink, ..., first*shrink^(k-1), adding up to n
		first := float64(n) * (1 - overlapShrink) / (1 - math.Pow(overlapShrink, float64(k)))
		if first*math.Pow(overlapShrink, float64(k-1)) < overlapMinWindows {
			continue
		}
		out := make([][]int, 0, k)
		from, size := 0, first
		for r := 0; r < k; r++ {
			to := from + int(math.Round(size))
			if r == k-1 {
				to = n
			}
			out = append(out, windows[from:to])
			from, size = to, size*overlapShrink
		}
		return out
	}
	return nil
}

// computeOverlapped computes the pairs' windows on the shard range by range
// (ComputeWindows each) and hands each range's sums of finalWindows to w on
// the control database, which writes them, one range after the other,
// while the shard computes the next ones. It returns the shard's work and a
// function that waits for the last control writes, still running; it has
// always waited for the others, error or not. The sums of windows the
// shard does not have whole (fewer than wholeAt turbines; 0: no such test)
// are not written: they are returned in the work's NotWhole, for the
// caller to fill in.
//
// The ranges are taken in order by the caller's shard transaction and, if
// pool gives a second session before they run out, by a helper
// transaction on it as well: one correction then computes on two cores
// (docs/design.md, "Large corrections"). The helper writes only its own
// ranges' turbine_window rows and farm_window_sum rows (its windows are no
// other range's), reads the readings at a snapshot taken after the
// caller's claim of the marks, and commits before computeOverlapped
// returns: before the control database commits (the parts written there
// from its sums then exist on the shard) and before the caller's
// statements that read its rows (the fill-in, the day's sums). If the
// recompute fails after that commit, the marks stay (they are the caller
// transaction's) and the next recompute repeats the work, finding the same
// rows: the helper changes nothing a recompute's outcome depends on. It
// takes no window lock: the caller's, held to its own commit, keeps every
// other writer of the farm-day out until then. sessions says how many
// transactions computed ranges (1 or 2).
func computeOverlapped(ctx context.Context, sq *sharddb.Queries, pool *pgxpool.Pool, g Grid, turbines []Turbine, rules fleet.Rules, pairs Pairs,
	finalWindows []int, ranges [][]int, wholeAt int, now time.Time, w *windowWriter) (total ShardWork, wait func() error, sessions int, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	var (
		mu   sync.Mutex
		next int
	)
	take := func() ([]int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(ranges) || ctx.Err() != nil {
			return nil, false
		}
		next++
		return ranges[next-1], true
	}
	// The control writes: one range's after the other, in the order the
	// shard sessions finish them; the day's reconciliation with the last.
	out := make(chan []sharddb.FarmWindowSumsRow, len(ranges))
	written := inBackground(func() error {
		for k := range ranges {
			var sums []sharddb.FarmWindowSumsRow
			select {
			case sums = <-out:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if err := w.write(ctx, sums, k == len(ranges)-1); err != nil {
				cancel(err)
				return err
			}
		}
		return nil
	})
	compute := func(q *sharddb.Queries, r []int) error {
		from, to := r[0], r[len(r)-1]
		var sums []int
		for _, i := range finalWindows {
			if i >= from && i <= to {
				sums = append(sums, i)
			}
		}
		work, err := ComputeWindows(ctx, q, g, turbines, rules, pairs.Within(from, to), sums, false, now)
		if err != nil {
			cancel(err)
			return err
		}
		whole, short := splitWhole(work.Sums, wholeAt)
		mu.Lock()
		total.Windows += work.Windows
		total.RowsRead += work.RowsRead
		total.Sums = append(total.Sums, whole...)
		total.NotWhole = append(total.NotWhole, short...)
		mu.Unlock()
		out <- whole
		return nil
	}
	// The helper: a second session, if the pool has one to give before the
	// ranges run out (it never waits for one once they have: a pool every
	// connection of which is a job waiting for its helper must not stall).
	acquire, stopAcquiring := context.WithCancel(ctx)
	defer stopAcquiring()
	var helped bool
	helper := inBackground(func() error {
		if pool == nil {
			return nil
		}
		conn, err := pool.Acquire(acquire)
		if err != nil {
			return nil // none to be had: the caller's transaction computes every range
		}
		defer conn.Release()
		fail := func(what string, err error) error {
			err = fmt.Errorf("helper session: %s: %w", what, err)
			cancel(err)
			return err
		}
		// A session that cannot begin (a connection gone stale in the pool)
		// helps with nothing: the caller's transaction computes every range.
		tx, err := conn.Begin(ctx)
		if err != nil {
			return nil
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		hq := sharddb.New(tx)
		if err := hq.PlanGeneric(ctx); err != nil {
			return nil
		}
		r, ok := take()
		if !ok {
			return nil
		}
		helped = true
		for ; ok; r, ok = take() {
			if err := compute(hq, r); err != nil {
				return err
			}
		}
		if context.Cause(ctx) != nil {
			return nil // the caller's error, or the control writes'
		}
		// Retention's cut, asked as the caller asks it after its own reads:
		// a day that lost readings is refused (the caller's check sees the
		// same record, made before this one), so nothing is committed here.
		lost, err := hq.ReadingsDayLost(ctx, g.Start)
		if err != nil {
			return fail("retention", err)
		}
		if lost.Lost {
			return nil
		}
		if err := tx.Commit(ctx); err != nil {
			return fail("commit", err)
		}
		return nil
	})
	for r, ok := take(); ok; r, ok = take() {
		if compute(sq, r) != nil {
			break
		}
	}
	stopAcquiring()
	_ = helper() // its errors are the context's cause
	if err := context.Cause(ctx); err != nil {
		// The first failure: a range's (either session's), the helper's
		// commit, a control write, or the job's own context.
		cancel(err)
		_ = written()
		return total, func() error { return nil }, 0, err
	}
	sessions = 1
	if helped {
		sessions = 2
	}
	return total, func() error {
		defer cancel(nil)
		return written()
	}, sessions, nil
}

// inBackground runs f in a goroutine and returns a function that waits for
// it and returns its error (each call the same).
func inBackground(f func() error) func() error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { err = <-done })
		return err
	}
}

// windowWriter writes a recompute's windows on the control database: this
// shard's parts of them, the final rows of those every shard has a part of
// (under the farm-day's final lock, taken once), and their reconciliation
// with the fast rows: each write's windows, and their day once, with the
// last write. finish raises the divergence alerts once, after the last
// write (and measures the day if the last write had no final row to write).
type windowWriter struct {
	q           *controldb.Queries
	farm, shard string
	day, now    time.Time
	jobID       *int64
	locked      bool
	final       int         // final rows written
	lastFinal   []time.Time // the windows of the last write that wrote final rows
	dayMeasured bool
}

func (w *windowWriter) write(ctx context.Context, sums []sharddb.FarmWindowSumsRow, last bool) error {
	if len(sums) == 0 {
		return nil
	}
	if err := w.q.FarmWindowPartUpsert(ctx, PartParams(w.farm, w.shard, sums, w.now)); err != nil {
		return fmt.Errorf("window parts: %w", err)
	}
	if err := w.lock(ctx); err != nil {
		return err
	}
	starts := make([]time.Time, len(sums))
	for i, s := range sums {
		starts[i] = s.WindowStart
	}
	written, err := w.q.FarmWindowFinalWrite(ctx, controldb.FarmWindowFinalWriteParams{
		FarmID: w.farm, WindowStarts: starts, ComputedAt: w.now, JobID: w.jobID,
	})
	if err != nil {
		return fmt.Errorf("final windows: %w", err)
	}
	w.final += len(written)
	if len(written) == 0 {
		return nil
	}
	ws := make([]time.Time, len(written))
	for i, x := range written {
		ws[i] = x.WindowStart
	}
	w.lastFinal = ws
	if err := w.q.ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: w.farm, WindowStarts: ws, WithDays: last, MeasuredAt: w.now}); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	w.dayMeasured = last
	return nil
}

// offGrid deletes the control database's rows of the day on another grid
// than g's (FarmWindowPartOffGridDelete): this shard's parts, the final rows
// and their window reconciliation. Run before the day's writes, or after
// them (the rows they wrote are on the grid), never beside them; a day
// measured before a final row or a measurement of it was deleted is
// measured again by finish.
func (w *windowWriter) offGrid(ctx context.Context, g Grid) (controldb.FarmWindowPartOffGridDeleteRow, error) {
	if err := w.lock(ctx); err != nil {
		return controldb.FarmWindowPartOffGridDeleteRow{}, err
	}
	del, err := w.q.FarmWindowPartOffGridDelete(ctx, controldb.FarmWindowPartOffGridDeleteParams{
		FarmID: w.farm, ShardName: w.shard, Day: w.day, DayStart: g.Start, DayEnd: g.End, WindowS: int32(g.Window / time.Second),
	})
	if err != nil {
		return del, fmt.Errorf("off-grid windows: %w", err)
	}
	if del.Finals > 0 || del.Reconciliations > 0 {
		w.dayMeasured = false
	}
	return del, nil
}

func (w *windowWriter) lock(ctx context.Context) error {
	if w.locked {
		return nil
	}
	if err := w.q.FarmWindowFinalLock(ctx, controldb.FarmWindowFinalLockParams{FarmID: w.farm, Day: w.day}); err != nil {
		return fmt.Errorf("final lock: %w", err)
	}
	w.locked = true
	return nil
}

func (w *windowWriter) finish(ctx context.Context) error {
	if w.final == 0 {
		return nil
	}
	if !w.dayMeasured {
		if err := w.q.ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: w.farm, WindowStarts: w.lastFinal, WithDays: true, MeasuredAt: w.now}); err != nil {
			return fmt.Errorf("reconcile the day: %w", err)
		}
	}
	if _, err := w.q.AlertDivergenceRaise(ctx, controldb.AlertDivergenceRaiseParams{FarmID: w.farm, Days: []time.Time{w.day}, RaisedAt: w.now}); err != nil {
		return fmt.Errorf("divergence alerts: %w", err)
	}
	return nil
}
