package publish

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
)

// Stall is one judgement of the stalled-turbine watcher: Action is
// "raised", "continued" or "cleared" (turbine_stall; the rule is
// StallJudge's, the thresholds stall_watch's).
type Stall struct {
	FarmID, TurbineID, Action string
	Window, FirstWindow       time.Time
	Message                   string
}

// judgeStalls hands one published window's turbine stats, from every shard
// of the farm, to the control database's StallJudge.
func (p *Publisher) judgeStalls(ctx context.Context, conn *pgxpool.Conn, farm string, windowStart time.Time, stats []sharddb.TurbineWindowStallStatsRow, now time.Time) error {
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
