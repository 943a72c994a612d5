package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Exported is one report file written.
type Exported struct {
	FarmID string
	Path   string
	Status string
	// HeldBack is how many days hold the month back.
	HeldBack int
}

// ErrNoFarms says there is nothing to export.
var ErrNoFarms = errors.New("no farms registered (orchestrator fleet apply FILE first)")

// ExportAll writes every farm's report for month into dir (created if
// missing), one file per farm named by FileName. A file is written whole or
// not at all (written aside, then renamed). A bad month fails on the first
// farm; a farm that fails on its own (a registry row from before the fleet
// file's limits whose file name is too long) does not stop the farms after
// it: they are written, and its error is returned with the others'.
func ExportAll(ctx context.Context, control *pgxpool.Pool, month string, f Format, dir string, now time.Time) ([]Exported, error) {
	farms, err := controldb.New(control).FarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list farms: %w", err)
	}
	if len(farms) == 0 {
		return nil, ErrNoFarms
	}
	var out []Exported
	var failed []error
	for _, farm := range farms {
		e, err := Export(ctx, control, farm.ID, month, f, dir, now)
		if errors.Is(err, ErrBadMonth) || ctx.Err() != nil {
			return out, err
		}
		if err != nil {
			// The OS's message repeats the whole path: cut it too.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s %s: %w", pe.Op, clip(pe.Path), pe.Err)
			}
			failed = append(failed, fmt.Errorf("farm %s: %w", clip(farm.ID), err))
			continue
		}
		out = append(out, e)
	}
	return out, errors.Join(failed...)
}

// clip cuts a farm id or a path for a message: a row from before the
// limits may hold megabytes.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(s[:200], ""), len(s))
}

// Export writes one farm's report for month into dir.
func Export(ctx context.Context, control *pgxpool.Pool, farmID, month string, f Format, dir string, now time.Time) (Exported, error) {
	m, err := MonthlyAt(ctx, control, farmID, month, now)
	if err != nil {
		return Exported{}, err
	}
	var b bytes.Buffer
	if err := Write(&b, m, f); err != nil {
		return Exported{}, err
	}
	path, err := writeWhole(dir, FileName(farmID, month, f), b.Bytes())
	if err != nil {
		return Exported{}, err
	}
	return Exported{FarmID: farmID, Path: path, Status: m.Status, HeldBack: len(m.HeldBack)}, nil
}
