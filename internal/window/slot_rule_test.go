package window_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// slotRuleCounts is one turbine_window row as the slot rule (docs/dba.md, "The slot rule") defines
// it.
type slotRuleCounts struct {
	Expected, Received, Available, BeyondCadence, OutOfService, Late, Early int32
	MinLagMs, MaxLagMs                                                      *int64
}

// TestWindowsFollowTheSlotRule: the window statement against the slot rule
// written out in Go, window by window, on readings no test builds by hand:
// 20,000 at random microseconds (seed 1) over a London summer day and the
// minute before it, with lags from 20 s early to 3 h late and one in ten
// unavailable, and four lags on the thresholds' edges (exactly the lane
// threshold and the early tolerance, and a microsecond past each), for a
// turbine of 7 s cadence (it does not divide the day)
// whose service starts at 00:02:03.123457 local and ends at 22:13:20.5,
// in 5-minute windows, and again for the run of windows 17-95 only; each on
// the shard connection's custom plan and on the generic plan a large
// correction runs; in both of TurbineWindowUpsert's modes (categories by
// the default contract's keys, and counts only, which a farm on such a
// contract without a power curve runs). Every count of every window
// must match: expected, received, available, beyond cadence, out of
// service, late, early, the lags in milliseconds and the slots per
// category.
func TestWindowsFollowTheSlotRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	q := sharddb.New(pool)
	dayStart := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC) // local midnight of 1 August, Europe/London
	dayEnd := dayStart.Add(24 * time.Hour)
	dayPartitions(t, q, time.Date(2026, 7, 31, 0, 0, 0, 0, time.UTC), 2)
	const (
		cadence = 7 * time.Second
		window  = 5 * time.Minute
		lane    = 60 * time.Second
		early   = 2 * time.Second
	)
	serviceFrom := dayStart.Add(3723123457 * time.Microsecond)
	serviceTo := dayStart.Add(80000500 * time.Millisecond)

	rng := rand.New(rand.NewSource(1))
	type reading struct {
		at, received time.Time
		available    bool
	}
	seen := map[time.Time]bool{}
	var rs []reading
	var ids []string
	var at, rec []time.Time
	var avail []bool
	// The thresholds' edges: a lag of exactly the lane threshold is not
	// late, a microsecond more is; exactly the tolerance early is not
	// early, a microsecond more is.
	for i, lag := range []time.Duration{lane, lane + time.Microsecond, -early, -early - time.Microsecond} {
		r := reading{at: dayStart.Add(10*time.Hour + time.Duration(i)*window + 1234567*time.Microsecond), available: true}
		r.received = r.at.Add(lag)
		seen[r.at] = true
		rs = append(rs, r)
		ids, at, rec, avail = append(ids, "T-07"), append(at, r.at), append(rec, r.received), append(avail, r.available)
	}
	for len(rs) < 20004 {
		r := reading{at: dayStart.Add(time.Duration(rng.Int63n(int64(24*time.Hour+time.Minute))) - time.Minute).Truncate(time.Microsecond)}
		if seen[r.at] {
			continue
		}
		seen[r.at] = true
		r.received = r.at.Add(time.Duration(rng.Int63n(int64(3*time.Hour+20*time.Second))) - 20*time.Second).Truncate(time.Microsecond)
		r.available = rng.Intn(10) != 0
		rs = append(rs, r)
		ids, at, rec, avail = append(ids, "T-07"), append(at, r.at), append(rec, r.received), append(avail, r.available)
	}
	testdb.Exec(t, pool, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms)
		SELECT unnest($1::text[]), unnest($2::timestamptz[]), unnest($3::timestamptz[]), unnest($4::boolean[]), 1000, 8`, ids, at, rec, avail)

	// The rule, written out.
	origin, stop := serviceFrom, serviceTo
	slots := int64(stop.Sub(origin) / cadence)
	n := int(dayEnd.Sub(dayStart) / window)
	want := make([]slotRuleCounts, n)
	received := make([]map[int64]bool, n)
	down := make([]map[int64]bool, n)
	inService := make([]int32, n)
	for k := int64(0); k < slots; k++ {
		want[int(origin.Add(time.Duration(k)*cadence).Sub(dayStart)/window)].Expected++
	}
	for i := range received {
		received[i], down[i] = map[int64]bool{}, map[int64]bool{}
	}
	ms := func(lag time.Duration) int64 { // numeric rounding: half away from zero
		us := lag.Microseconds()
		if us < 0 {
			return -((-us + 500) / 1000)
		}
		return (us + 500) / 1000
	}
	for _, r := range rs {
		if r.at.Before(dayStart) {
			continue // the day before: not this day's
		}
		var w int
		in := !r.at.Before(origin) && r.at.Before(stop)
		k := int64(-1)
		if in && slots > 0 {
			k = min(int64(r.at.Sub(origin)/cadence), slots-1)
			w = int(origin.Add(time.Duration(k)*cadence).Sub(dayStart) / window)
		} else {
			w = int(r.at.Sub(dayStart) / window)
		}
		c := &want[w]
		if in {
			inService[w]++
		} else {
			c.OutOfService++
		}
		if k >= 0 {
			received[w][k] = true
			if !r.available {
				down[w][k] = true
			}
		}
		lag := r.received.Sub(r.at)
		if lag > lane {
			c.Late++
		}
		if -lag > early {
			c.Early++
		}
		m := ms(lag)
		if c.MinLagMs == nil || m < *c.MinLagMs {
			c.MinLagMs = &m
		}
		if c.MaxLagMs == nil || m > *c.MaxLagMs {
			mm := m
			c.MaxLagMs = &mm
		}
	}
	for w := range want {
		want[w].Received = int32(len(received[w]))
		want[w].Available = int32(len(received[w]) - len(down[w]))
		want[w].BeyondCadence = inService[w] - want[w].Received
	}

	// The default contract's keys (control's contract_keys of contract 1:
	// priority rank * 16 + category id): full performance 12 * 16 + 1,
	// forced outage 8 * 16 + 10, out of environmental specification 4 * 16 + 5,
	// information unavailable 13 * 16 + 13.
	const keyAvailable, keyUnavailable, keyEnvironment, keyMissing = 193, 138, 69, 221
	type windowRow struct {
		Windows int64
	}
	// The statement in its two modes: sorting every slot into a category
	// by the contract's keys, and the categories from the counts alone (a
	// farm on such a contract without a power curve).
	statements := map[string]func(q *sharddb.Queries, run [2]int) ([]windowRow, error){}
	for name, categories := range map[string]bool{"categories": true, "counts only": false} {
		statements[name] = func(q *sharddb.Queries, run [2]int) ([]windowRow, error) {
			rows, err := q.TurbineWindowUpsert(ctx, sharddb.TurbineWindowUpsertParams{
				DayStart: dayStart, DayEnd: dayEnd, TurbineIds: []string{"T-07"}, CadenceSeconds: []int32{int32(cadence / time.Second)},
				ServiceFrom: []time.Time{serviceFrom}, ServiceTo: []time.Time{serviceTo},
				FirstWindow: []int32{int32(run[0])}, LastWindow: []int32{int32(run[1])},
				WindowS: int32(window / time.Second), LaneThresholdSeconds: lane.Seconds(), EarlyToleranceSeconds: early.Seconds(),
				FarmID: "f", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), ComputedAt: dayEnd,
				StateCodes: []string{}, StateKeys: []int32{}, KeyAvailable: keyAvailable, KeyUnavailable: keyUnavailable, KeyEnvironment: keyEnvironment,
				KeyMissing: keyMissing, EventTurbines: []string{}, EventFrom: []time.Time{}, EventTo: []time.Time{}, EventKeys: []int32{},
				Categories: categories,
			})
			out := make([]windowRow, len(rows))
			for i, r := range rows {
				out[i].Windows = r.Windows
			}
			return out, err
		}
	}
	for _, tc := range []struct {
		stmt    string
		run     [2]int
		generic bool
	}{{"categories", [2]int{0, n - 1}, false}, {"categories", [2]int{17, 95}, false},
		{"categories", [2]int{0, n - 1}, true}, {"categories", [2]int{17, 95}, true},
		{"counts only", [2]int{0, n - 1}, false}, {"counts only", [2]int{17, 95}, true}} {
		run := tc.run
		// Each case in its own transaction, rolled back: the next starts
		// from no window row.
		errRolledBack := errors.New("rolled back")
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if tc.generic {
				// as a large correction runs it (PlanGeneric)
				if err := sharddb.New(tx).PlanGeneric(ctx); err != nil {
					return err
				}
			}
			rows, err := statements[tc.stmt](sharddb.New(tx), run)
			if err != nil {
				return err
			}
			if len(rows) == 0 || rows[0].Windows != int64(run[1]-run[0]+1) {
				t.Fatalf("%s run %v (generic plan %v): wrote %d windows, want %d", tc.stmt, run, tc.generic, len(rows), run[1]-run[0]+1)
			}
			got, err := tx.Query(ctx, `SELECT window_start, expected, received, available, beyond_cadence, out_of_service, late, early, min_lag_ms, max_lag_ms,
				       category_slots::text
				FROM turbine_window WHERE turbine_id = 'T-07' ORDER BY window_start`)
			if err != nil {
				return err
			}
			defer got.Close()
			windows := 0
			for got.Next() {
				var start time.Time
				var c slotRuleCounts
				var categories string
				if err := got.Scan(&start, &c.Expected, &c.Received, &c.Available, &c.BeyondCadence, &c.OutOfService, &c.Late, &c.Early, &c.MinLagMs, &c.MaxLagMs, &categories); err != nil {
					return err
				}
				w := int(start.Sub(dayStart) / window)
				if w < run[0] || w > run[1] {
					t.Fatalf("%s run %v (generic plan %v): a row for window %d", tc.stmt, run, tc.generic, w)
				}
				if e := want[w]; !sameCounts(c, e) {
					t.Fatalf("%s run %v (generic plan %v), window %d (%s): got %s, want %s", tc.stmt, run, tc.generic, w, start.UTC().Format(time.RFC3339), c, e)
				}
				// Under the default contract: available slots are full
				// performance (1), the other received slots forced outage
				// (10), those without a reading information unavailable (13).
				e := want[w]
				if wantCat := fmt.Sprintf("{%d,0,0,0,0,0,0,0,0,%d,0,0,%d}", e.Available, e.Received-e.Available, e.Expected-e.Received); categories != wantCat {
					t.Fatalf("%s run %v (generic plan %v), window %d: category_slots %s, want %s", tc.stmt, run, tc.generic, w, categories, wantCat)
				}
				windows++
			}
			if windows != run[1]-run[0]+1 {
				t.Fatalf("%s run %v (generic plan %v): %d rows, want %d", tc.stmt, run, tc.generic, windows, run[1]-run[0]+1)
			}
			if err := got.Err(); err != nil {
				return err
			}
			return errRolledBack
		})
		if !errors.Is(err, errRolledBack) {
			testdb.Must(t, err, "windows")
		}
	}
}

func sameCounts(a, b slotRuleCounts) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Expected == b.Expected && a.Received == b.Received && a.Available == b.Available &&
		a.BeyondCadence == b.BeyondCadence && a.OutOfService == b.OutOfService && a.Late == b.Late && a.Early == b.Early &&
		eq(a.MinLagMs, b.MinLagMs) && eq(a.MaxLagMs, b.MaxLagMs)
}

func (c slotRuleCounts) String() string {
	lag := func(p *int64) any {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("expected %d received %d available %d beyond %d out %d late %d early %d lag %v..%v ms",
		c.Expected, c.Received, c.Available, c.BeyondCadence, c.OutOfService, c.Late, c.Early, lag(c.MinLagMs), lag(c.MaxLagMs))
}
