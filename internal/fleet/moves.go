package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// ApplyLock is the advisory lock (AdvisoryXactLockKey) held by a fleet
// apply's transaction, and by a move's switch: the apply reads where each
// turbine is and writes it back under it.
const ApplyLock = "fleet_apply"

// Move is a turbine moving its readings from one shard to another
// (turbine_move; internal/move works it).
type Move struct {
	ID        int64
	TurbineID string
	FarmID    string
	From, To  string
}

func (m Move) String() string {
	return fmt.Sprintf("move %d: turbine %s from shard %s to %s", m.ID, m.TurbineID, m.From, m.To)
}

func openMoves(ctx context.Context, q *controldb.Queries) (map[string]controldb.TurbineMoveOpenRow, error) {
	rows, err := q.TurbineMoveOpen(ctx)
	if err != nil {
		return nil, fmt.Errorf("moves in progress: %w", err)
	}
	out := make(map[string]controldb.TurbineMoveOpenRow, len(rows))
	for _, r := range rows {
		out[r.TurbineID] = r
	}
	return out, nil
}

// movesOf returns the plan with every turbine on the shard the registry has
// now, the moves its shard changes ask for, and the moves already under
// way to the shard the file gives (their job may have ended: the apply
// queues another).
func (r *Registry) movesOf(ctx context.Context, q *controldb.Queries, plan *Plan) (*Plan, []Move, []Move, error) {
	existing, err := q.TurbinePlacements(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	open, err := openMoves(ctx, q)
	if err != nil {
		return nil, nil, nil, err
	}
	shardOf := make(map[string]string, len(existing))
	for _, t := range existing {
		shardOf[t.ID] = t.ShardName
	}
	var moves, underway []Move
	var turbines []Turbine
	for i, t := range plan.Turbines {
		mv, moving := open[t.ID]
		if moving && mv.ToShard == t.Shard {
			underway = append(underway, Move{ID: mv.ID, TurbineID: t.ID, FarmID: t.FarmID, From: mv.FromShard, To: mv.ToShard})
		}
		cur, known := shardOf[t.ID]
		if !known || cur == t.Shard {
			continue
		}
		if turbines == nil {
			turbines = append([]Turbine(nil), plan.Turbines...)
		}
		turbines[i].Shard = cur
		if moving && mv.ToShard == t.Shard {
			continue // already moving there
		}
		moves = append(moves, Move{TurbineID: t.ID, FarmID: t.FarmID, From: cur, To: t.Shard})
	}
	if turbines == nil {
		return plan, nil, underway, nil
	}
	p := *plan
	p.Turbines = turbines
	return &p, moves, underway, nil
}

// startMoves records the moves (turbine_move, state copying) of apply
// applyID.
func startMoves(ctx context.Context, q *controldb.Queries, moves []Move, applyID int64, now time.Time) ([]Move, error) {
	for i := range moves {
		id, err := q.TurbineMoveInsert(ctx, controldb.TurbineMoveInsertParams{
			TurbineID: moves[i].TurbineID, FarmID: moves[i].FarmID, FromShard: moves[i].From, ToShard: moves[i].To,
			ApplyID: applyID, RequestedAt: now,
		})
		if err != nil {
			return nil, fmt.Errorf("turbine %s: start its move: %w", moves[i].TurbineID, err)
		}
		moves[i].ID = id
	}
	return moves, nil
}
