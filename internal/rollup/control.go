package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/window"
)

// writeControl is the control side of a recompute, after the shard's: the
// window writes (parts, final rows, reconciliation, unless written
// overlapped by computeShard), the divergence alerts, and the day's
// turbine_day rows and checks once it has ended. Closing the day first
// deletes what the control database holds of it on another grid (a window
// rule changed under it): the close rewrites every window of the day on
// its grid, so nothing is lost. A correction leaves the old grid's other
// final rows as they are until then (deleting them would leave those
// windows with no final row).
func (c *Computer) writeControl(ctx context.Context, d *day, s shardOutcome, res *Result) error {
	if d.closeDay {
		if _, err := s.ww.offGrid(ctx, d.g); err != nil {
			return err
		}
	}
	if len(s.ranges) == 0 {
		if err := s.ww.write(ctx, s.work.Sums, true); err != nil {
			return err
		}
	}
	if err := s.ww.finish(ctx); err != nil {
		return err
	}
	res.FinalWindows = s.ww.final
	if d.dayEnded && len(s.dayRows) > 0 {
		n, err := c.writeDay(ctx, d.q, d.req, s.dayRows, d.now)
		if err != nil {
			return err
		}
		res.Turbines = n
		alarms, err := c.checkDay(ctx, d.q, d.req, d.farm.DayStart, d.now, d.closeDay)
		if err != nil {
			return err
		}
		res.Alarms = append(res.Alarms, alarms...)
	}
	return nil
}

// writeDay upserts the day's turbine_day rows, added up from its windows.
func (c *Computer) writeDay(ctx context.Context, q *controldb.Queries, req Request, rows []sharddb.TurbineDayFromWindowsRow, now time.Time) (int, error) {
	up := controldb.TurbineDayUpsertParams{
		Day: req.Day, FarmID: req.FarmID, ShardName: req.Shard, ComputedAt: now, JobID: req.JobID,
	}
	for _, r := range rows {
		up.TurbineIds = append(up.TurbineIds, r.TurbineID)
		up.Expected = append(up.Expected, r.Expected)
		up.Received = append(up.Received, r.Received)
		up.Available = append(up.Available, r.Available)
		up.Late = append(up.Late, r.Late)
		up.Early = append(up.Early, r.Early)
		up.BeyondCadence = append(up.BeyondCadence, r.BeyondCadence)
		up.OutOfService = append(up.OutOfService, r.OutOfService)
		up.MinLagMs = append(up.MinLagMs, r.MinLagMs)
		up.MaxLagMs = append(up.MaxLagMs, r.MaxLagMs)
		up.LastReceivedAt = append(up.LastReceivedAt, r.LastReceivedAt)
		up.SilentHours = append(up.SilentHours, intArrayLiteral(r.SilentHours))
		up.InputReadings = append(up.InputReadings, r.InputReadings)
		up.InputHash = append(up.InputHash, r.InputHash)
		up.Fingerprinted = append(up.Fingerprinted, r.Fingerprinted)
		up.CategorySlots = append(up.CategorySlots, r.CategorySlots)
		up.CategoryActualWh = append(up.CategoryActualWh, r.CategoryActualWh)
		up.CategoryPotentialWh = append(up.CategoryPotentialWh, r.CategoryPotentialWh)
	}
	n, err := q.TurbineDayUpsert(ctx, up)
	if err != nil {
		return 0, fmt.Errorf("upsert turbine_day: %w", err)
	}
	return int(n), nil
}

// intArrayLiteral writes a Postgres integer[] literal ({1,2,3}).
func intArrayLiteral(v []int32) string {
	b := []byte{'{'}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, '}'))
}

// checkDay runs the day's checks once its turbine_day rows are written: the
// bug alarm (the shard's final window parts against its turbine_day rows,
// two groupings of the same windows) and, when closing the day, the
// completeness alert (received short of expected by more than the farm's
// threshold, naming the silent turbines and hours).
func (c *Computer) checkDay(ctx context.Context, q *controldb.Queries, req Request, dayStart, now time.Time, closeDay bool) ([]string, error) {
	if !closeDay {
		// A correction of an ended day: the checks belong to its close.
		return nil, nil
	}
	var alarms []string
	sum, err := q.FarmWindowPartSumCheck(ctx, controldb.FarmWindowPartSumCheckParams{FarmID: req.FarmID, Day: req.Day, ShardName: req.Shard})
	if err != nil {
		return nil, fmt.Errorf("window sum check: %w", err)
	}
	if sum.WindowsExpected != sum.DaysExpected || sum.WindowsReceived != sum.DaysReceived || sum.WindowsAvailable != sum.DaysAvailable {
		msg := fmt.Sprintf("BUG: %s shard %s: the day's final windows add up to expected/received/available %d/%d/%d but its turbine_day rows to %d/%d/%d",
			req.key(), req.Shard, sum.WindowsExpected, sum.WindowsReceived, sum.WindowsAvailable, sum.DaysExpected, sum.DaysReceived, sum.DaysAvailable)
		alarms = append(alarms, msg)
		detail, _ := json.Marshal(sum)
		if err := q.AlertRaise(ctx, controldb.AlertRaiseParams{
			Kind: "window_sum", FarmID: req.FarmID, Scope: "day", PeriodStart: dayStart, Day: req.Day, RaisedAt: now,
			Detail: detail, Message: msg,
		}); err != nil {
			return nil, fmt.Errorf("raise alarm: %w", err)
		}
	}
	// Compared and raised in SQL, as the divergence alert is.
	if _, err := q.AlertCompletenessRaise(ctx, controldb.AlertCompletenessRaiseParams{FarmID: req.FarmID, Day: req.Day, RaisedAt: now}); err != nil {
		return nil, fmt.Errorf("raise completeness alert: %w", err)
	}
	return alarms, nil
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
	if err := w.q.FarmWindowPartUpsert(ctx, window.PartParams(w.farm, w.shard, sums, w.now)); err != nil {
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
func (w *windowWriter) offGrid(ctx context.Context, g window.Grid) (controldb.FarmWindowPartOffGridDeleteRow, error) {
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
