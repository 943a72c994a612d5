package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// not at all (written aside, then renamed). It stops at the first error: a
// bad month fails on the first farm.
func ExportAll(ctx context.Context, control *pgxpool.Pool, month string, f Format, dir string, now time.Time) ([]Exported, error) {
	farms, err := controldb.New(control).FarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list farms: %w", err)
	}
	if len(farms) == 0 {
		return nil, ErrNoFarms
	}
	var out []Exported
	for _, farm := range farms {
		e, err := Export(ctx, control, farm.ID, month, f, dir, now)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Exported{}, err
	}
	path := filepath.Join(dir, FileName(farmID, month, f))
	tmp, err := os.CreateTemp(dir, "."+FileName(farmID, month, f)+".*")
	if err != nil {
		return Exported{}, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return Exported{}, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return Exported{}, err
	}
	if err := tmp.Close(); err != nil {
		return Exported{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Exported{}, err
	}
	return Exported{FarmID: farmID, Path: path, Status: m.Status, HeldBack: len(m.HeldBack)}, nil
}
