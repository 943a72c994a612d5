// Package verify proves a rolled-up day's input: it recomputes, from the
// readings on each shard, the input fingerprint every turbine_day row keeps
// (how many readings and the order-independent sum of their
// input_fingerprint) and names each turbine-day that differs. It writes
// nothing. Counts follow from their input: the rollup is idempotent, so the
// same readings give the same counts.
package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/localday"
)

// Mismatch is one turbine-day whose stored fingerprint is not its
// readings'.
type Mismatch struct {
	FarmID, TurbineID, Shard string
	Day                      localday.Date
	// Stored is what turbine_day says (nil: computed before fingerprints);
	// Now what the readings say.
	StoredReadings, StoredHash *int64
	NowReadings, NowHash       int64
}

func (m Mismatch) String() string {
	at := fmt.Sprintf("%s/%s %s on %s", m.FarmID, m.Day, m.TurbineID, m.Shard)
	switch {
	case m.StoredReadings == nil || m.StoredHash == nil:
		return at + ": no fingerprint (rolled up before fingerprints existed; recompute the day to fingerprint it)"
	case *m.StoredReadings != m.NowReadings:
		return fmt.Sprintf("%s: counted from %d readings, %d there now (readings deleted, added or moved since)", at, *m.StoredReadings, m.NowReadings)
	}
	return fmt.Sprintf("%s: %d readings, as counted, but not the same ones (fingerprint %d counted, %d now: a reading edited or replaced)",
		at, m.NowReadings, *m.StoredHash, m.NowHash)
}

// Result is what a verification found.
type Result struct {
	// Days is how many farm-days had rows; Rows how many turbine-days were
	// checked.
	Days, Rows int
	Mismatches []Mismatch
}

// Farm verifies farm's days from..to (inclusive).
func Farm(ctx context.Context, q *controldb.Queries, shards *fleet.Shards, farm string, from, to localday.Date) (Result, error) {
	var res Result
	for d := from; !d.UTC().After(to.UTC()); d = d.AddDays(1) {
		rows, err := q.TurbineDayFingerprints(ctx, controldb.TurbineDayFingerprintsParams{FarmID: farm, Day: d.UTC()})
		if err != nil {
			return res, fmt.Errorf("%s/%s: turbine_day: %w", farm, d, err)
		}
		if len(rows) == 0 {
			continue
		}
		bounds, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: farm, Day: d.UTC()})
		if err != nil {
			return res, fmt.Errorf("%s/%s: day bounds: %w", farm, d, err)
		}
		res.Days++
		byShard := map[string][]controldb.TurbineDayFingerprintsRow{}
		var order []string
		for _, r := range rows {
			if byShard[r.ShardName] == nil {
				order = append(order, r.ShardName)
			}
			byShard[r.ShardName] = append(byShard[r.ShardName], r)
		}
		for _, shard := range order {
			got, err := fingerprints(ctx, shards, shard, byShard[shard], bounds.DayStart, bounds.DayEnd)
			if err != nil {
				return res, fmt.Errorf("%s/%s: %w", farm, d, err)
			}
			for _, r := range byShard[shard] {
				res.Rows++
				now := got[r.TurbineID]
				if r.InputReadings != nil && r.InputHash != nil && *r.InputReadings == now.Readings && *r.InputHash == now.InputHash {
					continue
				}
				res.Mismatches = append(res.Mismatches, Mismatch{
					FarmID: farm, TurbineID: r.TurbineID, Shard: shard, Day: d,
					StoredReadings: r.InputReadings, StoredHash: r.InputHash, NowReadings: now.Readings, NowHash: now.InputHash,
				})
			}
		}
	}
	return res, nil
}

func fingerprints(ctx context.Context, shards *fleet.Shards, shard string, rows []controldb.TurbineDayFingerprintsRow, start, end time.Time) (map[string]sharddb.ReadingsFingerprintRow, error) {
	pool := shards.Pool(shard)
	if pool == nil {
		return nil, fmt.Errorf("shard %s: not in the registry", shard)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.TurbineID
	}
	got, err := sharddb.New(pool).ReadingsFingerprint(ctx, sharddb.ReadingsFingerprintParams{TurbineIds: ids, DayStart: start, DayEnd: end})
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", shard, err)
	}
	out := make(map[string]sharddb.ReadingsFingerprintRow, len(got))
	for _, g := range got {
		out[g.TurbineID] = g
	}
	return out, nil
}
