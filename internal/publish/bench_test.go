package publish_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkFillToday: what filling in a whole day costs (fill.go). A farm
// of 300 turbines on 3 shards (Ardnave's size), then 1,554, published at
// 00:00-00:01 (UTC) and away until 23:59: the fast path catches up the
// last hour (59 windows), then fills in the 1,378 it skipped. Without
// readings (the feed was down too), then with the day's readings of the
// 300 turbines (2 s cadence, 12.9 million, written straight to the
// shards). The figure is the wall time from the last live window's
// publication to the last filled one's.
// Run: go test -run '^$' -bench BenchmarkFillToday -benchtime 1x ./internal/publish
func BenchmarkFillToday(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, c := range []struct {
			turbines int
			readings bool
		}{{300, false}, {1554, false}, {300, true}} {
			benchFillToday(b, c.turbines, c.readings)
		}
	}
}

func benchFillToday(b *testing.B, turbines int, readings bool) {
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var fleet strings.Builder
	fleet.WriteString("shards: [{name: s1}, {name: s2}, {name: s3}]\nfarms:\n  - id: big\n    timezone: UTC\n    turbines:\n")
	for s := 1; s <= 3; s++ {
		fmt.Fprintf(&fleet, "      - {prefix: B%d-, from: 1, to: %d, shard: s%d}\n", s, turbines/3, s)
	}
	p := setup(b, fleet.String(), pipelinetest.Options{})
	if readings {
		p.Clock.Set(day.Add(24 * time.Hour))
		for s := 1; s <= 3; s++ {
			p.ReadingsAt(b, day, fmt.Sprintf("B%d-%03d", s, 1)) // its partition
			shard := p.Env.Shards.Pool(fmt.Sprintf("s%d", s))
			testdb.Exec(b, shard, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state)
				SELECT $1 || lpad(i::text, 3, '0'), $2::timestamptz + k * interval '2 s', $2::timestamptz + k * interval '2 s' + interval '1 s', true, 1000, 8, ''
				FROM generate_series(1, $3::integer) AS i, generate_series(0, 43199) AS k
				ON CONFLICT DO NOTHING`, fmt.Sprintf("B%d-", s), day, turbines/3)
			testdb.Exec(b, shard, `VACUUM (ANALYZE) readings`)
		}
	}
	pub := p.PublisherWith(2 * time.Minute)
	p.Clock.Set(day.Add(2 * time.Minute))
	if _, err := pub.PublishDue(ctx); err != nil {
		b.Fatal(err)
	}
	pub.CatchUp = time.Hour
	p.Clock.Set(day.Add(23*time.Hour + 59*time.Minute))
	live := day.Add(22*time.Hour + 59*time.Minute) // the catch-up's first window
	var mu sync.Mutex
	var lastLive, lastFill time.Time
	pub.OnPublish = func(w publish.Published) {
		mu.Lock()
		defer mu.Unlock()
		if w.WindowStart.Before(live) {
			lastFill = time.Now()
		} else {
			lastLive = time.Now()
		}
	}
	var sum publish.Summary
	for {
		s, err := pub.PublishDue(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sum.Windows += s.Windows
		sum.Filled += s.Filled
		sum.RowsRead += s.RowsRead
		if s.Windows == 0 && s.Filled == 0 {
			break
		}
	}
	if sum.Windows != 59 || sum.Filled != 1378 {
		b.Fatalf("%d live windows and %d filled in, want 59 and 1,378", sum.Windows, sum.Filled)
	}
	took := lastFill.Sub(lastLive)
	msg := fmt.Sprintf("fill-in of a day: %d turbines, %d readings read: 1,378 windows (%d turbine-windows) in %.1f s, %.1f ms a window",
		turbines/3*3, sum.RowsRead, 1378*(turbines/3*3), took.Seconds(), float64(took.Microseconds())/1000/1378)
	fmt.Println(msg)
	b.Log(msg)
}
