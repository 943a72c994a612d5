package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAStallFoundLateIsShownWithHowLate: N-002's open stall, whose first
// window (06:00-12:00 BST on 4 August) was judged stalled by a correction at
// 13:00, is on north's tile as found late 1 h after that window ended, and
// in the tile's JSON (found_late, found_at, found_after_s 3,600). N-003's
// stall in the final day of 1 August, found late at 09:00 the next day and
// cleared at 12:00 that day, is listed on that day's page (the tile shows
// only open stalls), and not on 2 August's.
func TestAStallFoundLateIsShownWithHowLate(t *testing.T) {
	t.Parallel()
	e := statusSetup(t, "")
	testdb.Exec(t, e.env.Control, `INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, windows, raised_at, cleared_at, cleared_window,
			detail, message, found_late, found_at, first_window_end)
		VALUES ('north', 'N-002', $1, $1, 1, $2, NULL, NULL, '{}', 'N-002 stalled: test', true, $2, $1::timestamptz + interval '6 hours'),
		       ('north', 'N-003', $3, $3, 1, $4, $4, $3::timestamptz + interval '6 hours', '{}', 'N-003 stalled: test', true, $4, $3::timestamptz + interval '6 hours')`,
		bst(4, 6, 0), bst(4, 13, 0), bst(1, 6, 0), bst(2, 9, 0))
	var tile struct {
		Stalled []struct {
			TurbineID   string    `json:"turbine_id"`
			FoundLate   bool      `json:"found_late"`
			FoundAt     time.Time `json:"found_at"`
			FoundAfterS *float64  `json:"found_after_s"`
		} `json:"stalled"`
	}
	getJSON(t, e.url+"/api/v1/farms/north/tile", 200, &tile)
	if len(tile.Stalled) != 1 || tile.Stalled[0].TurbineID != "N-002" || !tile.Stalled[0].FoundLate || !tile.Stalled[0].FoundAt.Equal(bst(4, 13, 0)) ||
		tile.Stalled[0].FoundAfterS == nil || *tile.Stalled[0].FoundAfterS != 3600 {
		t.Fatalf("north's tile: stalled %+v, want N-002 found late at 13:00 BST, 3600 s after its first window", tile.Stalled)
	}
	_, farm := get(t, e.url+"/farms/north")
	if want := `stalled: N-002 since 06:00 <span class="found-late">(found late, 1 h 00 m after)</span></span>`; !strings.Contains(farm, want) {
		t.Fatalf("north's page lacks %q", want)
	}
	_, day := get(t, e.url+"/farms/north/days/2026-08-01")
	table := element(t, day, "table", "stalls")
	for _, want := range []string{`data-turbine="N-003"`, "2026-08-01 06:00:00 BST", "2026-08-01 12:00:00 BST", "late: 2026-08-02 09:00:00 BST, 21 h 00 m after its first window"} {
		if !strings.Contains(table, want) {
			t.Errorf("1 August's stalls lack %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "N-002") {
		t.Errorf("1 August's stalls list N-002's of 4 August:\n%s", table)
	}
	if _, next := get(t, e.url+"/farms/north/days/2026-08-02"); strings.Contains(next, `id="stalls"`) {
		t.Error("2 August's page lists a stall")
	}
}
