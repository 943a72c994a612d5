package server_test

import (
	"html"
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAnnouncedMarksHoldTheStatusPageBack: the status page and the API say
// what the report says. 1 August is final until a writer announces marks
// of it on s1 (dirty_mark_announced: stored there, no drain has read them);
// then the day reads provisional and pending, says why, and the month with
// it; so does the tile's latest window, whose day (4 August) has marks
// announced on s2.
func TestAnnouncedMarksHoldTheStatusPageBack(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	testdb.Exec(t, e.env.Control, `INSERT INTO dirty_mark_announced (farm_id, day, shard_name, xact, marked_at)
		VALUES ('north', '2026-08-01', 's1', 1000, $1), ('north', '2026-08-04', 's2', 1001, $1)`, statusNow)
	const why = "shard not drained (marked on s1 at 2026-08-04 12:30:00 UTC, not drained yet)"

	var days daysJSON
	getJSON(t, e.url+"/api/v1/farms/north/days", 200, &days)
	if d := days.Days[0]; d.Day != "2026-08-01" || d.Status != "provisional" || !d.Pending || d.Why != why || d.Received != 33840 {
		t.Fatalf("1 August with marks announced: %+v; want provisional, pending, %q, 33,840 received as before", d, why)
	}
	var tile struct {
		Window *struct{ Pending bool }
	}
	getJSON(t, e.url+"/api/v1/farms/north/tile", 200, &tile)
	if tile.Window == nil || !tile.Window.Pending {
		t.Fatalf("tile window of 4 August with marks announced on s2: %+v, want pending", tile.Window)
	}
	code, page := get(t, e.url+"/farms/north?month=2026-08")
	if code != 200 || !strings.Contains(html.UnescapeString(page), why) {
		t.Fatalf("farm page: %d, want 200 naming %q", code, why)
	}
}
