package move

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// WriteList prints the newest moves (orchestrator fleet moves): each
// move's step and its counts so far.
func WriteList(ctx context.Context, q *controldb.Queries, limit int, out io.Writer) error {
	rows, err := q.TurbineMoveList(ctx, int32(max(limit, 1)))
	if err != nil {
		return fmt.Errorf("moves: %w", err)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, "no turbine has moved between shards (give a turbine another shard in the fleet file and apply it)")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MOVE\tTURBINE\tFARM\tFROM\tTO\tSTATE\tDAYS COPIED\tREADINGS COPIED\tSWITCHED AT\tCAUGHT UP\tVERIFIED\tDELETED\tREQUESTED\tFINISHED\tLAST ERROR")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.ID, r.TurbineID, r.FarmID, r.FromShard, r.ToShard, r.State, r.DaysCopied, r.DaysTotal, r.RowsCopied,
			instant(r.SwitchedAt), count(r.RowsCaughtUp), count(r.RowsVerified), count(r.RowsDeleted),
			r.RequestedAt.UTC().Format(time.RFC3339), instant(r.FinishedAt), r.LastError)
	}
	return w.Flush()
}

func instant(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
