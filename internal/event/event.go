// Package event enters, voids and lists operator events (control's
// operator_event): an interval of an IEC 61400-26-1 category on a farm's
// turbines that the readings cannot say — a grid curtailment the turbine
// does not see, a force majeure, scheduled maintenance. A slot an event
// covers takes the better, by the contract's priority, of the event's
// category and its readings' (TurbineWindowUpsert). Entering or voiding one
// queues a recompute of every farm-day it overlaps that has begun, in the
// same transaction: the counts follow the trail. Nothing is deleted.
package event

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/text"
)

// ErrInvalid is an event refused for what it says (its message names each
// problem); ErrNotFound an unknown event id.
var (
	ErrInvalid  = errors.New("invalid event")
	ErrNotFound = errors.New("no such event")
)

// maxSpan bounds an event: every day it overlaps is recomputed.
const maxSpan = 366 * 24 * time.Hour

// Spec is an event as entered.
type Spec struct {
	Farm     string    `json:"farm"`
	Turbines []string  `json:"turbines,omitempty"` // none: every turbine of the farm
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Category string    `json:"category"` // availability_category.code
	Note     string    `json:"note"`
	By       string    `json:"entered_by"`
}

// Event is one row of the trail.
type Event struct {
	ID        int64      `json:"id"`
	Farm      string     `json:"farm"`
	Turbines  []string   `json:"turbines"` // empty: every turbine of the farm
	From      time.Time  `json:"from"`
	To        time.Time  `json:"to"`
	Category  string     `json:"category"`
	Note      string     `json:"note"`
	By        string     `json:"entered_by"`
	At        time.Time  `json:"entered_at"`
	DBUser    string     `json:"entered_db_user"`
	VoidedBy  *string    `json:"voided_by,omitempty"`
	VoidedAt  *time.Time `json:"voided_at,omitempty"`
	VoidNote  *string    `json:"void_note,omitempty"`
	Recompute []string   `json:"recompute_days,omitempty"` // the farm-days queued by this change
	Jobs      int        `json:"jobs_queued,omitempty"`
}

// Add validates spec, enters it at now and queues the recompute of the
// farm-days it overlaps that have begun by now, in one transaction.
func Add(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], spec Spec, now time.Time) (Event, error) {
	var problems []string
	spec.Note, spec.By, spec.Category = strings.TrimSpace(spec.Note), strings.TrimSpace(spec.By), strings.TrimSpace(spec.Category)
	if spec.Farm == "" {
		problems = append(problems, "farm: required")
	}
	if spec.From.IsZero() || spec.To.IsZero() {
		problems = append(problems, "from, to: both required (RFC 3339 instants, e.g. 2026-08-01T13:00:00Z)")
	} else if !spec.To.After(spec.From) {
		problems = append(problems, fmt.Sprintf("to (%s) must be after from (%s)", spec.To.UTC().Format(time.RFC3339), spec.From.UTC().Format(time.RFC3339)))
	} else if spec.To.Sub(spec.From) > maxSpan {
		problems = append(problems, fmt.Sprintf("from-to spans %s; at most 366 days (every day it covers is recomputed): enter it as several events", spec.To.Sub(spec.From).Round(time.Hour)))
	}
	if spec.Note == "" {
		problems = append(problems, "note: required (why, in words: it is kept with who and when)")
	}
	if spec.By == "" {
		problems = append(problems, "entered_by: required (who enters it)")
	}
	for _, f := range []struct{ name, v string }{{"farm", spec.Farm}, {"category", spec.Category}, {"note", spec.Note}, {"entered_by", spec.By}} {
		problems = append(problems, badText(f.name, f.v)...)
	}
	seen := map[string]bool{}
	for _, t := range spec.Turbines {
		problems = append(problems, badText("turbines", t)...)
		if t == "" || seen[t] {
			problems = append(problems, fmt.Sprintf("turbines: %q is empty or given twice", t))
		}
		seen[t] = true
	}
	if spec.Turbines == nil {
		spec.Turbines = []string{}
	}
	var out Event
	err := pgx.BeginFunc(ctx, control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		chk, err := q.OperatorEventCheck(ctx, controldb.OperatorEventCheckParams{FarmID: spec.Farm, Category: spec.Category, TurbineIds: spec.Turbines})
		if err != nil {
			return err
		}
		if spec.Farm != "" && !chk.FarmKnown {
			problems = append(problems, fmt.Sprintf("farm: %q is not in the registry", spec.Farm))
		} else if len(chk.UnknownTurbines) > 0 {
			problems = append(problems, fmt.Sprintf("turbines: %s not of farm %s in the registry", strings.Join(chk.UnknownTurbines, ", "), spec.Farm))
		}
		if chk.CategoryID == 0 {
			problems = append(problems, fmt.Sprintf("category: %q is not one of %s (information_unavailable is no event: it is what a slot without information is)", spec.Category, chk.Categories))
		}
		if len(problems) > 0 {
			return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
		}
		id, err := q.OperatorEventInsert(ctx, controldb.OperatorEventInsertParams{FarmID: spec.Farm, TurbineIds: spec.Turbines, FromAt: spec.From,
			ToAt: spec.To, CategoryID: chk.CategoryID, Note: spec.Note, EnteredBy: spec.By, EnteredAt: now})
		if err != nil {
			return err
		}
		if out, err = recompute(ctx, tx, client, id, now); err != nil {
			return err
		}
		return nil
	})
	return out, err
}

// Void voids event id (by, note required) at now and queues the
// recompute of the farm-days it overlapped, in one transaction.
func Void(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], id int64, by, note string, now time.Time) (Event, error) {
	by, note = strings.TrimSpace(by), strings.TrimSpace(note)
	var problems []string
	if note == "" {
		problems = append(problems, "note: required (why it is voided)")
	}
	if by == "" {
		problems = append(problems, "voided_by: required (who voids it)")
	}
	problems = append(problems, badText("voided_by", by)...)
	problems = append(problems, badText("note", note)...)
	if len(problems) > 0 {
		return Event{}, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	var out Event
	err := pgx.BeginFunc(ctx, control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		cur, err := q.OperatorEventGet(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %d (orchestrator event list shows them)", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if cur.VoidedAt != nil {
			return fmt.Errorf("%w: event %d was voided by %s at %s", ErrInvalid, id, *cur.VoidedBy, cur.VoidedAt.UTC().Format(time.RFC3339))
		}
		if _, err := q.OperatorEventVoid(ctx, controldb.OperatorEventVoidParams{ID: id, VoidedBy: &by, VoidedAt: &now, VoidNote: &note}); err != nil {
			return err
		}
		out, err = recompute(ctx, tx, client, id, now)
		return err
	})
	return out, err
}

// badText names what is wrong with a text field (text.Check: the rule for
// every word an operator types), or nothing.
func badText(name, v string) []string {
	if err := text.Check(name, v); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// recompute reads event id back and queues its farm-days.
func recompute(ctx context.Context, tx pgx.Tx, client *river.Client[pgx.Tx], id int64, now time.Time) (Event, error) {
	q := controldb.New(tx)
	row, err := q.OperatorEventGet(ctx, id)
	if err != nil {
		return Event{}, err
	}
	e := fromRow(controldb.OperatorEventListRow(row))
	days, err := q.OperatorEventDays(ctx, controldb.OperatorEventDaysParams{FarmID: e.Farm, FromAt: e.From, ToAt: e.To, Now: now})
	if err != nil {
		return Event{}, fmt.Errorf("the event's days: %w", err)
	}
	for _, d := range days {
		day := d.Format(time.DateOnly)
		ids, err := jobs.EnqueueFarmDayTx(ctx, tx, client, e.Farm, day, rollup.ReasonManual, jobs.PriorityManual)
		if err != nil {
			return Event{}, fmt.Errorf("queue the recompute of %s %s: %w", e.Farm, day, err)
		}
		e.Recompute = append(e.Recompute, day)
		e.Jobs += len(ids)
	}
	return e, nil
}

// List lists events overlapping [from, to) of farm ("" for every farm),
// newest first, voided ones too, at most max.
func List(ctx context.Context, control controldb.DBTX, farm string, from, to time.Time, max int) ([]Event, error) {
	rows, err := controldb.New(control).OperatorEventList(ctx, controldb.OperatorEventListParams{FarmID: farm, FromAt: from, ToAt: to, MaxRows: int32(max)})
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

func fromRow(r controldb.OperatorEventListRow) Event {
	return Event{ID: r.ID, Farm: r.FarmID, Turbines: r.TurbineIds, From: r.FromAt, To: r.ToAt, Category: r.Category, Note: r.Note,
		By: r.EnteredBy, At: r.EnteredAt, DBUser: r.EnteredDbUser, VoidedBy: r.VoidedBy, VoidedAt: r.VoidedAt, VoidNote: r.VoidNote}
}
