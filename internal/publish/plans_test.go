package publish_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestFastPathReadsItsLastWindow: asking which of a farm's windows are due
// for publication reads the farm's last fast window through the key (the
// latest first), not every fast row the farm has: with 30 days of history
// (43,200 fast rows), analysed or not, no row of farm_window is read by a
// sequential scan and at most 100 index entries (a max(window_end) over
// the farm's fast rows would read all of them, for every farm in every
// publication round).
func TestFastPathReadsItsLastWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, first := pipelinetest.ControlHistory(t)
	next := first.Add(30 * 24 * time.Hour) // 31 July 23:00Z: the window after the last fast one
	for _, unanalysed := range []bool{true, false} {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "farm_window"); err != nil {
					return err
				}
			}
			due, err := controldb.New(tx).FarmWindowsDue(ctx, controldb.FarmWindowsDueParams{
				FarmID: "f", StartFrom: first, Now: next.Add(24 * time.Hour), MaxWindows: 5,
			})
			if err != nil {
				return err
			}
			if len(due) != 5 || !due[0].WindowStart.Equal(next) || !due[4].WindowStart.Equal(next.Add(4*time.Minute)) {
				t.Fatalf("unanalysed=%v: %d windows due (%+v), want 5 from %s", unanalysed, len(due), due, next)
			}
			seq, idx, err := testdb.TableReads(ctx, tx, "farm_window")
			if err != nil {
				return err
			}
			if seq != 0 || idx > 100 {
				t.Fatalf("unanalysed=%v: %d rows of farm_window read by sequential scan, %d index entries; want 0 and <= 100 (the farm has 86,400)", unanalysed, seq, idx)
			}
			t.Logf("unanalysed=%v: %d index entries read", unanalysed, idx)
			return nil
		})
		testdb.Must(t, err, "windows due")
	}
}
