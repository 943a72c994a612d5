package server_test

import (
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestTodaySaysWhichPartItsWindowsCover: a day summed from its windows
// says how many of its windows are past the watermark (windows_due), and
// the pages say so when fewer are in its figure. In the status fixture at
// 4 August 13:30 BST, north's 6-hour windows 00:00 and 06:00 are past the
// watermark and both published: 2 of 2, no label; the closed days have 4
// of 4. With the 00:00 window's row gone (a fast path away past it), the
// day sums 1 of its 2: 8,640 slots expected, not 17,280, and the farm's
// page and the day's page say "only 1 of its 2 windows".
func TestTodaySaysWhichPartItsWindowsCover(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	check := func(windows, expected int64, label bool) {
		t.Helper()
		var got daysJSON
		body := getJSON(t, e.url+"/api/v1/farms/north/days", 200, &got)
		var due []int
		for _, d := range got.Days {
			due = append(due, d.WindowsDue)
		}
		if len(got.Days) != 4 || due[0] != 4 || due[1] != 4 || due[2] != 4 || due[3] != 2 ||
			int64(got.Days[3].Windows) != windows || got.Days[3].Expected != expected {
			t.Fatalf("days: windows_due %v, today %d windows, %d expected; want 4, 4, 4, 2 due and today %d windows, %d expected (%s)",
				due, got.Days[3].Windows, got.Days[3].Expected, windows, expected, body)
		}
		_, farm := get(t, e.url+"/farms/north?month=2026-08")
		_, day := get(t, e.url+"/farms/north/days/2026-08-04")
		row := element(t, farm, "tr", "day-2026-08-04")
		if strings.Contains(row, "only 1 of its 2 windows so far") != label || strings.Contains(day, "only 1 of the 2 past the watermark") != label ||
			strings.Count(farm, "windows-partial") != map[bool]int{true: 1}[label] {
			t.Fatalf("the pages' label of today's part (want it: %v):\n%s\n%s", label, row, element(t, day, "section", "day-2026-08-04"))
		}
	}
	check(2, 17_280, false)
	testdb.Exec(t, e.env.Control, `DELETE FROM farm_window WHERE farm_id = 'north' AND window_start = $1`, bst(4, 0, 0))
	check(1, 8_640, true)
}
