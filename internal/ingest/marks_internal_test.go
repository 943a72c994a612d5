package ingest

import (
	"fmt"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
)

// TestMarksAreRuns: one batch, written the next day (every reading marks),
// of turbine T-1's readings every 2 s over 10:00:00–10:09:58 UTC on
// 1 August (London: 11:00–11:10 local) sent in reverse order, plus one
// reading at 10:30:00 and one of the day before. The marks are runs of
// consecutive windows, one row each: [09:59, 10:10) with 11 windows (the
// first reading may count towards the window two cadences back),
// [10:29, 10:31) with 2, and the previous day's [10:29, 10:31) with 2.
// T-2, marked only in the window of 10:05, is a run of 2 windows too.
func TestMarksAreRuns(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	rules := fleet.Rules{Window: time.Minute, AllowedLateness: time.Minute, MarkMargin: 30 * time.Second}
	t1 := &Route{TurbineID: "T-1", FarmID: "f", Location: london, Cadence: 2 * time.Second, Rules: rules}
	t2 := &Route{TurbineID: "T-2", FarmID: "f", Location: london, Cadence: 2 * time.Second, Rules: rules}
	at := func(day, h, m, s int) time.Time { return time.Date(2026, 8, day, h, m, s, 0, time.UTC) }
	s := newMarkSet(at(2, 12, 0, 0))
	for i := 299; i >= 0; i-- {
		s.add(t1, at(1, 10, 0, 0).Add(time.Duration(i)*2*time.Second))
	}
	s.add(t1, at(1, 10, 30, 0))
	s.add(t1, at(1, 10, 30, 0).AddDate(0, 0, -1))
	s.add(t2, at(1, 10, 5, 0))
	params := s.windowParams()
	if len(params) != 1 {
		t.Fatalf("%d inserts, want 1 (one farm)", len(params))
	}
	p := params[0]
	var got []string
	for i := range p.TurbineIds {
		got = append(got, fmt.Sprintf("%s %s %s–%s %d", p.TurbineIds[i], p.Days[i].Format("01-02"),
			p.WindowStarts[i].UTC().Format("15:04"), p.WindowEnds[i].UTC().Format("15:04"), p.Windows[i]))
	}
	want := "[T-1 07-31 10:29–10:31 2 T-1 08-01 09:59–10:10 11 T-1 08-01 10:29–10:31 2 T-2 08-01 10:04–10:06 2]"
	if fmt.Sprint(got) != want {
		t.Fatalf("runs %v\nwant %s", got, want)
	}
}
