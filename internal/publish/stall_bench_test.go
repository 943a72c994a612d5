package publish_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkJudgeCorrection: what the stalled-turbine watcher adds to a
// correction (judge_stalls). A farm of 300 turbines on 3 shards (Ardnave's
// size) with 7 hours of readings at 2 s (05:40-12:40, Ardnave's lost
// hours: 12.6 million), one turbine feathered throughout; a correction of
// its first 60 windows, then of all 420, is judged (Publisher.JudgeStalls:
// the shards' stats, StallJudge, the first production, each verdict
// placed), beside its floor in the same run: the bare stats statement
// (TurbineWindowStallStats on the 3 shards at once, the reads the judgement
// cannot do without). Each figure is the best of 3; "again" judges the
// same windows a second time (nothing to write).
// Run: go test -run '^$' -bench BenchmarkJudgeCorrection -benchtime 1x ./internal/publish
func BenchmarkJudgeCorrection(b *testing.B) {
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	from := day.Add(5*time.Hour + 40*time.Minute)
	const turbines, minutes = 300, 420
	var fleet strings.Builder
	fleet.WriteString("shards: [{name: s1}, {name: s2}, {name: s3}]\nfarms:\n  - id: big\n    timezone: UTC\n    turbines:\n")
	for s := 1; s <= 3; s++ {
		fmt.Fprintf(&fleet, "      - {prefix: B%d-, from: 1, to: %d, shard: s%d}\n", s, turbines/3, s)
	}
	p := setup(b, fleet.String(), pipelinetest.Options{})
	p.Clock.Set(day.Add(24 * time.Hour))
	for s := 1; s <= 3; s++ {
		p.ReadingsAt(b, day, fmt.Sprintf("B%d-%03d", s, 1)) // its partition
		shard := p.Env.Shards.Pool(fmt.Sprintf("s%d", s))
		testdb.Exec(b, shard, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state)
			SELECT $1 || lpad(i::text, 3, '0'), $2::timestamptz + k * interval '2 s', $2::timestamptz + k * interval '2 s' + interval '1 s', true,
			       CASE WHEN $1 = 'B1-' AND i = 1 THEN 0 ELSE 1000 END, 8, ''
			FROM generate_series(1, $3::integer) AS i, generate_series(0, $4::integer * 30 - 1) AS k
			ON CONFLICT DO NOTHING`, fmt.Sprintf("B%d-", s), from, turbines/3, minutes)
		testdb.Exec(b, shard, `VACUUM (ANALYZE) readings`)
	}
	best := func(n int, f func() time.Duration) time.Duration {
		var m time.Duration
		for i := 0; i < n; i++ {
			if d := f(); i == 0 || d < m {
				m = d
			}
		}
		return m
	}
	for i := 0; i < b.N; i++ {
		for _, windows := range []int{60, 420} {
			var starts []time.Time
			for w := 0; w < windows; w++ {
				starts = append(starts, from.Add(time.Duration(w)*time.Minute))
			}
			floor := best(3, func() time.Duration {
				start := time.Now()
				var wg sync.WaitGroup
				for s := 1; s <= 3; s++ {
					var ids []string
					for t := 1; t <= turbines/3; t++ {
						ids = append(ids, fmt.Sprintf("B%d-%03d", s, t))
					}
					wg.Go(func() {
						_, err := sharddb.New(p.Env.Shards.Pool(fmt.Sprintf("s%d", s))).TurbineWindowStallStats(ctx, sharddb.TurbineWindowStallStatsParams{
							DayStart: day, WindowS: 60, TurbineIds: ids, RangeFrom: []time.Time{starts[0]}, RangeTo: []time.Time{starts[windows-1].Add(time.Minute)}})
						testdb.Must(b, err, "stats")
					})
				}
				wg.Wait()
				return time.Since(start)
			})
			judge := func() time.Duration {
				start := time.Now()
				testdb.Must(b, p.Publisher.JudgeStalls(ctx, "big", day, starts), "judge")
				return time.Since(start)
			}
			first := judge()
			again := best(3, judge)
			if got := testdb.Text(b, p.Env.Control, `SELECT string_agg(turbine_id || ' ' || windows, ', ') FROM turbine_stall`); got != fmt.Sprintf("B1-001 %d", windows) {
				b.Fatalf("stalls %q, want B1-001 over %d windows", got, windows)
			}
			msg := fmt.Sprintf("judging a correction of %d windows (%d turbine-windows): %.0f ms (again %.0f ms) against its floor, the bare stats statement, %.0f ms: %.2f× (again %.2f×)",
				windows, windows*turbines, ms(first), ms(again), ms(floor), float64(first)/float64(floor), float64(again)/float64(floor))
			fmt.Println(msg)
			b.Log(msg)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
