package report

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/text"
)

// StatusIncomplete is a day that has ended and settled but has more slots
// without a reading than its farm's threshold (completeness_alert_pm), and
// no acceptance: information unavailable. A month with one is incomplete.
const StatusIncomplete = "incomplete"

// ErrInvalidNote is an acceptance refused for its note: blank, or not
// operator text (text.Check). Its message says what is wrong and where.
var ErrInvalidNote = errors.New("invalid note")

// ErrNotIncomplete is an acceptance refused because the day is not
// incomplete (final already, or provisional: the pipeline may still change
// it). Its message says what the day is and why.
var ErrNotIncomplete = errors.New("not incomplete")

// Acceptance is an operator's acceptance of an incomplete farm-day,
// recorded in farm_day_acceptance (never deleted).
type Acceptance struct {
	ID                 int64
	FarmID             string
	Day                localday.Date
	Expected, Received int64
	By                 string
	At                 time.Time
}

// Accept records that an operator accepts farmID's day as it is, with
// note (required: the why, kept with who and when). The day must be
// incomplete as judged at now; the acceptance holds while no more of its
// slots are missing than now. A blank note or one that is not operator text
// is ErrInvalidNote; an unknown farm, ErrUnknownFarm; a day that is not
// incomplete, ErrNotIncomplete.
func Accept(ctx context.Context, control controldb.DBTX, farmID string, day localday.Date, note string, now time.Time) (Acceptance, error) {
	if strings.TrimSpace(note) == "" {
		return Acceptance{}, fmt.Errorf("%w: --note: say why the day is accepted as it is (it is kept with who and when)", ErrInvalidNote)
	}
	if err := text.Check("--note", note); err != nil {
		return Acceptance{}, fmt.Errorf("%w: %v", ErrInvalidNote, err)
	}
	r, err := controldb.New(control).FarmDayAccept(ctx, controldb.FarmDayAcceptParams{FarmID: farmID, Day: day.UTC(), Now: now, Note: note})
	if errors.Is(err, pgx.ErrNoRows) {
		return Acceptance{}, fmt.Errorf("%w: %q (SELECT id FROM farm lists them)", ErrUnknownFarm, farmID)
	}
	if err != nil {
		return Acceptance{}, err
	}
	if r.AcceptanceID == nil {
		why := r.Why
		if why == "" {
			why = "nothing holds it back"
		}
		return Acceptance{}, fmt.Errorf("%w: %s %s is %s (%s); only an incomplete day is accepted", ErrNotIncomplete, farmID, day, r.Status, why)
	}
	return Acceptance{ID: *r.AcceptanceID, FarmID: farmID, Day: day, Expected: r.Expected, Received: r.Received, By: *r.AcceptedBy, At: *r.AcceptedAt}, nil
}
