package report_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestExportAllWritesTheFarmsAfterOneThatFails: a farm row from before
// migration 00022 whose id makes a file name over 255 bytes sorts first;
// --all still writes every other farm's file and returns that farm's error
// (before, it stopped there and wrote nothing).
func TestExportAllWritesTheFarmsAfterOneThatFails(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms:\n  - {id: north, timezone: UTC, turbines: [{id: N-1, shard: s1}]}\n  - {id: south, timezone: UTC, turbines: [{id: S-1, shard: s1}]}\n")
	testdb.Exec(t, env.Control, `ALTER TABLE farm DROP CONSTRAINT IF EXISTS farm_id_bounded`)
	long := "a" + strings.Repeat("x", 2999)
	testdb.Exec(t, env.Control, `INSERT INTO farm (id, name, timezone) VALUES ($1, 'Too Long', 'UTC')`, long)
	dir := t.TempDir()
	now := time.Date(2026, 9, 2, 12, 0, 0, 0, time.UTC)
	out, err := report.ExportAll(context.Background(), env.Control, "2026-08", report.FormatJSON, dir, now)
	if err == nil || !strings.Contains(err.Error(), "farm axxx") || !strings.Contains(err.Error(), "(3000 bytes)") || len(err.Error()) > 1000 {
		t.Fatalf("ExportAll: %.1000v, want an error naming the long farm (cut)", err)
	}
	if len(out) != 2 || out[0].FarmID != "north" || out[1].FarmID != "south" {
		t.Fatalf("ExportAll wrote %+v, want north and south", out)
	}
	for _, name := range []string{"north_2026-08.json", "south_2026-08.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
}
