// Package provenance is the one shape in which every surface (CLI, API,
// status page, report) shows a number: its counts, which path made it
// (fast or final), when, what it is complete through, its revision, and
// whether a recompute is still pending. It reads the control database's
// provenance views (window_provenance, day_provenance), which pick the row to show.
package provenance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Provenance is a number and where it came from.
type Provenance struct {
	FarmID string `json:"farm_id"`
	// Scope is "window" or "day".
	Scope string    `json:"scope"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Day is the farm-local day (YYYY-MM-DD).
	Day string `json:"day"`
	// Path is "fast" (published at the watermark, never changed) or
	// "final" (corrected by late readings; a day is final only when every
	// window of it is).
	Path            string    `json:"path"`
	Expected        int64     `json:"expected"`
	Received        int64     `json:"received"`
	Available       int64     `json:"available"`
	ComputedAt      time.Time `json:"computed_at"`
	CompleteThrough time.Time `json:"complete_through"`
	Revision        int64     `json:"revision"`
	// Pending: a recompute is requested or running; the number may change.
	Pending bool `json:"pending"`
	// Windows and FinalWindows (scope day): windows shown, and of those the
	// final ones.
	Windows      int `json:"windows,omitempty"`
	FinalWindows int `json:"final_windows,omitempty"`
}

// Availability is available / expected, computed at read time (0 when
// nothing is expected).
func (p Provenance) Availability() float64 {
	if p.Expected == 0 {
		return 0
	}
	return float64(p.Available) / float64(p.Expected)
}

// Completeness is received / expected (0 when nothing is expected).
func (p Provenance) Completeness() float64 {
	if p.Expected == 0 {
		return 0
	}
	return float64(p.Received) / float64(p.Expected)
}

// ErrNotPublished says there is no number yet for what was asked.
var ErrNotPublished = errors.New("nothing published yet")

func fromWindow(w controldb.WindowProvenance) Provenance {
	return Provenance{
		FarmID: w.FarmID, Scope: "window", Start: w.WindowStart, End: w.WindowEnd, Day: w.Day.Format(time.DateOnly),
		Path: w.Path, Expected: w.Expected, Received: w.Received, Available: w.Available,
		ComputedAt: w.ComputedAt, CompleteThrough: w.CompleteThrough, Revision: int64(w.Revision), Pending: w.Pending,
	}
}

func notPublished(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotPublished)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Tile is a farm's latest window as shown.
func Tile(ctx context.Context, db controldb.DBTX, farm string) (Provenance, error) {
	w, err := controldb.New(db).ProvenanceTile(ctx, farm)
	if err != nil {
		return Provenance{}, notPublished(err, "farm "+farm+" tile")
	}
	return fromWindow(w), nil
}

// Window is one window as shown.
func Window(ctx context.Context, db controldb.DBTX, farm string, start time.Time) (Provenance, error) {
	w, err := controldb.New(db).ProvenanceWindow(ctx, controldb.ProvenanceWindowParams{FarmID: farm, WindowStart: start})
	if err != nil {
		return Provenance{}, notPublished(err, fmt.Sprintf("farm %s window %s", farm, start.UTC().Format(time.RFC3339)))
	}
	return fromWindow(w), nil
}

// Day is one farm-local day (a date) as shown: the sum of its windows.
func Day(ctx context.Context, db controldb.DBTX, farm string, day time.Time) (Provenance, error) {
	d, err := controldb.New(db).ProvenanceDay(ctx, controldb.ProvenanceDayParams{FarmID: farm, Day: day})
	if err != nil {
		return Provenance{}, notPublished(err, fmt.Sprintf("farm %s day %s", farm, day.Format(time.DateOnly)))
	}
	return Provenance{
		FarmID: d.FarmID, Scope: "day", Start: d.FirstWindowStart, End: d.LastWindowEnd, Day: d.Day.Format(time.DateOnly),
		Path: d.Path, Expected: d.Expected, Received: d.Received, Available: d.Available,
		ComputedAt: d.ComputedAt, CompleteThrough: d.CompleteThrough, Revision: d.Revision, Pending: d.Pending,
		Windows: int(d.Windows), FinalWindows: int(d.FinalWindows),
	}, nil
}

// Freshness is how far behind the clock a farm's published numbers are.
type Freshness struct {
	FarmID           string    `json:"farm_id"`
	Published        bool      `json:"published"`
	PublishedThrough time.Time `json:"published_through"`
	CompleteThrough  time.Time `json:"complete_through"`
	LastPublishedAt  time.Time `json:"last_published_at"`
}

// Behind is now − CompleteThrough (the freshness a farm's tile shows).
func (f Freshness) Behind(now time.Time) time.Duration { return now.Sub(f.CompleteThrough) }

// Freshnesses lists every farm's freshness.
func Freshnesses(ctx context.Context, db controldb.DBTX) ([]Freshness, error) {
	rows, err := controldb.New(db).FarmFreshness(ctx)
	if err != nil {
		return nil, fmt.Errorf("freshness: %w", err)
	}
	out := make([]Freshness, len(rows))
	for i, r := range rows {
		out[i] = Freshness{FarmID: r.FarmID, Published: r.Published, PublishedThrough: r.PublishedThrough,
			CompleteThrough: r.CompleteThrough, LastPublishedAt: r.LastPublishedAt}
	}
	return out, nil
}

// Count shows a count as every surface writes it, with thousands
// separators: 12,960,000.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
