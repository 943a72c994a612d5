package publish

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/window"
)

// Stall is one judgement of the stalled-turbine watcher: Action is
// "raised", "continued" or "cleared" (turbine_stall; the rule is
// StallJudge's, the thresholds stall_watch's).
type Stall struct {
	FarmID, TurbineID, Action string
	Window, FirstWindow       time.Time
	Message                   string
}

// stallWatch is a farm window just published, for the watcher: where its
// turbines are.
type stallWatch struct {
	farm       string
	start, end time.Time
	shards     []string
	turbines   [][]window.Turbine // per shard, as the publication counted them
	now        time.Time
}

// watch runs the stall watcher on a published window, after its
// publication and outside the round's farm slot: each shard reads the
// window's readings per turbine (TurbineWindowStallStats: power and wind),
// then the control database judges
// (StallJudge). A failure is logged; it never holds a publication back.
func (p *Publisher) watch(ctx context.Context, w *stallWatch) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(p.ShardTimeout, DefaultShardTimeout))
	defer cancel()
	stats := make([][]sharddb.TurbineWindowStallStatsRow, len(w.shards))
	errs := make([]error, len(w.shards))
	var wg sync.WaitGroup
	for i, shard := range w.shards {
		pool := p.Shards.Pool(shard)
		if pool == nil || len(w.turbines[i]) == 0 {
			continue
		}
		wg.Go(func() {
			stats[i], errs[i] = sharddb.New(pool).TurbineWindowStallStats(ctx, sharddb.TurbineWindowStallStatsParams{
				TurbineIds: window.IDs(w.turbines[i]), WindowStart: w.start, WindowEnd: w.end})
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		err = p.judgeStalls(ctx, p.Control, w.farm, w.start, slices.Concat(stats...), w.now)
	}
	if err != nil {
		p.log().Warn("stall watcher", "farm", w.farm, "window", w.start, "err", err)
	}
}

// judgeStalls hands one published window's turbine stats, from every shard
// of the farm, to the control database's StallJudge.
func (p *Publisher) judgeStalls(ctx context.Context, conn controldb.DBTX, farm string, windowStart time.Time, stats []sharddb.TurbineWindowStallStatsRow, now time.Time) error {
	if len(stats) == 0 {
		return nil
	}
	arg := controldb.StallJudgeParams{FarmID: farm, WindowStart: windowStart, JudgedAt: now}
	for _, s := range stats {
		arg.TurbineIds = append(arg.TurbineIds, s.TurbineID)
		arg.Received = append(arg.Received, s.Received)
		arg.Available = append(arg.Available, s.Available)
		arg.PowerMaxKw = append(arg.PowerMaxKw, s.PowerMaxKw)
		arg.WindSumMs = append(arg.WindSumMs, s.WindSumMs)
		arg.WindReadings = append(arg.WindReadings, s.WindReadings)
	}
	rows, err := controldb.New(conn).StallJudge(ctx, arg)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Action == "raised" || r.Action == "cleared" {
			p.log().Info("stall watcher: "+r.Action, "farm", farm, "turbine", r.TurbineID, "since", r.FirstWindow, "window", windowStart)
		}
		if p.OnStall != nil {
			p.OnStall(Stall{FarmID: farm, TurbineID: r.TurbineID, Action: r.Action, Window: windowStart, FirstWindow: r.FirstWindow, Message: r.Message})
		}
	}
	return nil
}

func (p *Publisher) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
