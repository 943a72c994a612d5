package publish

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// The fill-in: a fast path away for longer than CatchUp (the process was
// down, a shard or the control database unreachable) restarts CatchUp
// back, and the windows of today before that would have no row until the
// day's close: today's sum (day_provenance, the report's row of today)
// would count the last hour, and read more complete than it is. Once a
// farm's live windows are caught up, the windows of today it skipped
// (FarmWindowsGap) are published as fast rows, oldest first, a slice of
// the run's budget at a time (MaxWindows, MaxTurbineWindows), outside the
// round's farm slots and at most FillParallel farms at once. Before each
// slice the farm's next live window is looked at: once it is due, the
// fill-in stops and the next round publishes it, so a live window waits
// for at most one slice.
//
// A filled window claims no dirty mark: it is before the farm's latest
// fast window, so a correction may take it at the same time
// (leaveToFastPath), and a mark the fill-in absorbed while the
// correction's older snapshot wrote the final row would leave a reading
// out of the number shown; a mark left costs one recompute more. A window
// with a final row is never filled (FarmWindowFastPublish).

// DefaultFillParallel is how many farms fill in at once in a process: the
// fill-in is background work beside the live windows, the ingest and the
// corrections, and a whole day of a farm's windows costs about what its
// day's rollup does (docs/dba.md, "Windows, fast and final").
const DefaultFillParallel = 1

// setFill records whether the farm's today may hold skipped windows.
func (p *Publisher) setFill(farm string, gap bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fill == nil {
		p.fill = map[string]bool{}
	}
	p.fill[farm] = gap
}

// fillWanted: the farm's today may hold skipped windows (or this process
// has not looked yet).
func (p *Publisher) fillWanted(farm string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	gap, ok := p.fill[farm]
	return !ok || gap
}

// untilLive is how long until the farm's next live window is due at now
// (<= 0: it is due; a minute when this process has not published it).
func (p *Publisher) untilLive(farm string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, ok := p.nextDue[farm]
	if !ok {
		return time.Minute
	}
	return next.Sub(now)
}

// fillSlot takes a fill-in slot, waiting at most until the farm's next
// live window is due (the farm is in flight meanwhile).
func (p *Publisher) fillSlot(ctx context.Context, farm string) (release func(), ok bool) {
	p.mu.Lock()
	if p.filling == nil {
		p.filling = make(chan struct{}, cmp.Or(p.FillParallel, DefaultFillParallel))
	}
	slots := p.filling
	p.mu.Unlock()
	wait := p.untilLive(farm, p.Now())
	if wait <= 0 {
		return nil, false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, true
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, false
}

// fillFarm publishes the windows of today the farm's fast path skipped,
// slice by slice, until none is left or its next live window is due, and
// returns how many windows it published and the readings it counted. A
// failure is logged; a later round tries again.
func (p *Publisher) fillFarm(ctx context.Context, farm string) (published int, rows int64) {
	if !p.fillWanted(farm) {
		return 0, 0
	}
	release, ok := p.fillSlot(ctx, farm)
	if !ok {
		return 0, 0
	}
	defer release()
	for p.fillWanted(farm) {
		now := p.Now()
		if p.untilLive(farm, now) <= 0 {
			break
		}
		sctx, cancel := context.WithTimeout(ctx, cmp.Or(p.FarmTimeout, DefaultFarmTimeout))
		n, r, err := p.fillSlice(sctx, farm, now)
		cancel()
		published += n
		rows += r
		if err != nil {
			p.log().Warn("fast path: filling in skipped windows of today", "farm", farm, "err", err)
			break
		}
		if n == 0 {
			break // another publisher holds the farm, or nothing was left
		}
	}
	return published, rows
}

// fillSlice publishes one slice of the skipped windows at now.
func (p *Publisher) fillSlice(ctx context.Context, farm string, now time.Time) (int, int64, error) {
	conn, unlock, locked, err := p.lockFarm(ctx, farm)
	if err != nil || !locked {
		return 0, 0, err
	}
	defer unlock()
	q := controldb.New(conn)
	maxWindows := cmp.Or(p.MaxWindows, 120)
	gap, err := q.FarmWindowsGap(ctx, controldb.FarmWindowsGapParams{FarmID: farm, Now: now, MaxWindows: int32(maxWindows)})
	if err != nil {
		return 0, 0, fmt.Errorf("skipped windows: %w", err)
	}
	if len(gap) == 0 {
		p.setFill(farm, false)
		return 0, 0, nil
	}
	// One run of consecutive windows: one range computed per shard.
	due := []controldb.FarmWindowsDueRow{controldb.FarmWindowsDueRow(gap[0])}
	for _, w := range gap[1:] {
		if !w.WindowStart.Equal(due[len(due)-1].WindowEnd) {
			break
		}
		due = append(due, controldb.FarmWindowsDueRow(w))
	}
	shards, err := q.FarmShards(ctx, farm)
	if err != nil {
		return 0, 0, err
	}
	took, published, rows, _, err := p.publishDay(ctx, conn, farm, shards, due, now, true)
	if err == nil && took == len(gap) && len(gap) < maxWindows {
		p.setFill(farm, false) // nothing skipped is left
	}
	return published, rows, err
}
