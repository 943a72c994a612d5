package event_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/event"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// eventFleet: a farm of two turbines at a 10-minute cadence (144 slots a
// day) on the default contract, and a second farm.
const eventFleet = `
shards: [{name: s1}]
farms:
  - id: grid
    timezone: UTC
    cadence_seconds: 600
    commissioned_at: 2026-07-01T00:00:00Z
    turbines: [{id: G-1, shard: s1}, {id: G-2, shard: s1}]
  - id: other
    timezone: UTC
    cadence_seconds: 600
    commissioned_at: 2026-07-01T00:00:00Z
    turbines: [{id: O-1, shard: s1}]
`

var day = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// readings: G-1 available in slots 0-59 and 104-143, stopped (unavailable)
// in 60-103 except 70-73, which have no reading (the link was down too);
// G-2 available all day.
func readings() string {
	var b strings.Builder
	line := func(id string, k int, available bool) {
		at := day.Add(time.Duration(k)*10*time.Minute + 5*time.Second)
		fmt.Fprintf(&b, `{"turbine_id":%q,"recorded_at":%q,"available":%t,"power_kw":0,"wind_ms":9}`+"\n", id, at.Format(time.RFC3339), available)
	}
	for k := 0; k < 144; k++ {
		switch {
		case k >= 70 && k < 74:
		case k >= 60 && k < 104:
			line("G-1", k, false)
		default:
			line("G-1", k, true)
		}
		line("G-2", k, true)
	}
	return b.String()
}

type dayRow struct {
	Available              int64
	Slots, Contractual     string
	TimeBased, InfoMissing string
}

func contractDay(t *testing.T, p *pipelinetest.Pipeline) dayRow {
	t.Helper()
	var r dayRow
	err := p.Env.Control.QueryRow(context.Background(), `
		SELECT available, category_slots::text, to_char(100 * contractual_availability, 'FM990.0000'),
		       to_char(100 * time_based_availability, 'FM990.0000'), to_char(100 * information_unavailable, 'FM990.0000')
		FROM farm_day_contract WHERE farm_id = 'grid' AND day = '2026-08-01'`).Scan(&r.Available, &r.Slots, &r.Contractual, &r.TimeBased, &r.InfoMissing)
	testdb.Must(t, err, "farm_day_contract")
	return r
}

// TestAGridCurtailmentEventRecomputesAClosedDayAndItsVoidRestoresIt: a day
// rolled up and closed; then an operator enters a grid curtailment
// (requested shutdown, available under the default contract) on G-1 from
// 10:00 to 14:00; the event queues the day's recompute in its own
// transaction, and the recompute sorts the 24 slots it covers into it —
// 20 that the readings call a forced outage and 4 without a reading
// (requested shutdown outranks both). Voiding it restores the day exactly.
func TestAGridCurtailmentEventRecomputesAClosedDayAndItsVoidRestoresIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, testdb.New(t, eventFleet), pipelinetest.Options{At: time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)})
	p.IngestText(t, readings())
	p.Enqueue(t, "grid", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	p.WaitJobs(t)

	// Before: G-1 100 available, 40 forced outage, 4 no reading; G-2 144.
	// Contractual = time-based = 244 / 288 = 84.7222 %.
	before := dayRow{Available: 244, Slots: "{244,0,0,0,0,0,0,0,0,40,0,0,4}", Contractual: "84.7222", TimeBased: "84.7222", InfoMissing: "1.3889"}
	if got := contractDay(t, p); got != before {
		t.Fatalf("before the event:\n got %+v\nwant %+v", got, before)
	}

	ev, err := event.Add(ctx, p.Env.Control, p.Client, event.Spec{Farm: "grid", Turbines: []string{"G-1"},
		From: day.Add(10 * time.Hour), To: day.Add(14 * time.Hour), Category: "requested_shutdown",
		Note: "TSO curtailment order 4711", By: "ops-anna"}, p.Now())
	testdb.Must(t, err, "event add")
	if strings.Join(ev.Recompute, ",") != "2026-08-01" || ev.Jobs != 1 || ev.By != "ops-anna" || ev.VoidedAt != nil {
		t.Fatalf("event add: recompute %v, %d jobs, by %q, voided %v; want [2026-08-01], 1 job (one shard), ops-anna, not voided", ev.Recompute, ev.Jobs, ev.By, ev.VoidedAt)
	}
	p.WaitJobs(t)

	// With it: G-1's slots 60-83 are requested shutdown (20 forced outage
	// and 4 without a reading before); available under the default
	// contract. Contractual 268 / 288 = 93.0556 %; time-based stays
	// 244 / 288 (the readings say what they said).
	with := dayRow{Available: 244, Slots: "{244,0,0,0,0,24,0,0,0,20,0,0,0}", Contractual: "93.0556", TimeBased: "84.7222", InfoMissing: "0.0000"}
	if got := contractDay(t, p); got != with {
		t.Fatalf("with the curtailment:\n got %+v\nwant %+v", got, with)
	}

	// A second void is refused; the first restores the day.
	voided, err := event.Void(ctx, p.Env.Control, p.Client, ev.ID, "ops-ben", "order 4711 was for another farm", p.Now())
	testdb.Must(t, err, "event void")
	if voided.VoidedBy == nil || *voided.VoidedBy != "ops-ben" || strings.Join(voided.Recompute, ",") != "2026-08-01" {
		t.Fatalf("void: voided by %v, recompute %v; want ops-ben, [2026-08-01]", voided.VoidedBy, voided.Recompute)
	}
	p.WaitJobs(t)
	if got := contractDay(t, p); got != before {
		t.Fatalf("after the void:\n got %+v\nwant %+v", got, before)
	}
	if _, err := event.Void(ctx, p.Env.Control, p.Client, ev.ID, "ops-ben", "again", p.Now()); !errors.Is(err, event.ErrInvalid) || !strings.Contains(err.Error(), "was voided by ops-ben") {
		t.Fatalf("second void: %v; want ErrInvalid naming who voided it", err)
	}

	// The trail keeps it: listed with both names, and never deleted.
	list, err := event.List(ctx, p.Env.Control, "grid", day, day.AddDate(0, 0, 1), 10)
	testdb.Must(t, err, "event list")
	if len(list) != 1 || list[0].Category != "requested_shutdown" || list[0].By != "ops-anna" || list[0].VoidNote == nil || *list[0].VoidNote != "order 4711 was for another farm" {
		t.Fatalf("event list: %+v; want the one event, requested_shutdown, by ops-anna, voided with its note", list)
	}
	if _, err := p.Env.Control.Exec(ctx, `DELETE FROM operator_event WHERE id = $1`, ev.ID); err == nil || !strings.Contains(err.Error(), "is never deleted") {
		t.Fatalf("DELETE FROM operator_event: %v; want refused (the audit trail)", err)
	}
	if _, err := p.Env.Control.Exec(ctx, `UPDATE operator_event SET note = 'edited' WHERE id = $1`, ev.ID); err == nil || !strings.Contains(err.Error(), "already voided") {
		t.Fatalf("UPDATE operator_event: %v; want refused", err)
	}
}

// TestAnEventIsValidatedWithEveryProblemNamed: nothing is entered and no
// job queued when an event is wrong; each problem is named.
func TestAnEventIsValidatedWithEveryProblemNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, testdb.New(t, eventFleet), pipelinetest.Options{At: time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)})
	_, err := event.Add(ctx, p.Env.Control, p.Client, event.Spec{Farm: "grid", Turbines: []string{"G-1", "O-1"},
		From: day.Add(14 * time.Hour), To: day.Add(10 * time.Hour), Category: "curtailment", By: "ops-anna"}, p.Now())
	if !errors.Is(err, event.ErrInvalid) {
		t.Fatalf("event add: %v; want ErrInvalid", err)
	}
	for _, want := range []string{"must be after from", "note: required", "O-1 not of farm grid", `category: "curtailment" is not one of full_performance`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	_, err = event.Add(ctx, p.Env.Control, p.Client, event.Spec{Farm: "nowhere", From: day, To: day.Add(time.Hour), Category: "information_unavailable",
		Note: "n", By: "b"}, p.Now())
	if !errors.Is(err, event.ErrInvalid) || !strings.Contains(err.Error(), `farm: "nowhere" is not in the registry`) || !strings.Contains(err.Error(), "information_unavailable is no event") {
		t.Fatalf("event add: %v; want the farm and the category named", err)
	}
	if n := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM operator_event`); n != 0 {
		t.Fatalf("%d events entered; want 0", n)
	}
	if n := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day'`); n != 0 {
		t.Fatalf("%d rollup_day jobs queued; want 0", n)
	}
}

// TestEventTextIsText: a note or a name that would not print as typed — a
// control character (an escape sequence clears the terminal of whoever
// lists the events), a bidi override or a zero-width character, which
// scramble event list, bytes that are not UTF-8, or over 2,000 bytes — is
// refused naming the field, the code point and its byte offset, for an
// event and for a void; nothing is entered. The control database holds a
// row written by hand to the same rule (operator_event_text), and an event
// stored before the rule can still be voided.
func TestEventTextIsText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, testdb.New(t, eventFleet), pipelinetest.Options{At: time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)})
	spec := func(note, by string) event.Spec {
		return event.Spec{Farm: "grid", From: day.Add(10 * time.Hour), To: day.Add(14 * time.Hour), Category: "requested_shutdown", Note: note, By: by}
	}
	for _, c := range []struct {
		spec event.Spec
		says []string
	}{
		{spec("order\x1b[2J 4711", "ops-anna"), []string{"note: U+001B at byte 5 is a control character"}},
		{spec("order 4711\nsecond line", "ops-anna"), []string{"note: U+000A at byte 10 is a tab or line break (operator text is one line)"}},
		{spec("order 4711", "ops-\u202eanna"), []string{"entered_by: U+202E at byte 4 is a bidi control"}},
		{spec("order\u200b 4711 \u2066x", "o\u0085ps"), []string{"note: U+200B at byte 5 is a zero-width character", "entered_by: U+0085 at byte 1 is a control character"}},
		{spec("order \xff", "ops-anna"), []string{"note: byte 0xff at byte 6 is not UTF-8"}},
		{spec(strings.Repeat("x", 120<<10), "ops-anna"), []string{"note: 122880 bytes; at most 2000"}},
	} {
		_, err := event.Add(ctx, p.Env.Control, p.Client, c.spec, p.Now())
		if !errors.Is(err, event.ErrInvalid) {
			t.Errorf("event add %.40q by %q: %v; want ErrInvalid", c.spec.Note, c.spec.By, err)
			continue
		}
		for _, want := range c.says {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("event add %.40q by %q: %v; want it to say %q", c.spec.Note, c.spec.By, err, want)
			}
		}
	}
	if n := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM operator_event`); n != 0 {
		t.Fatalf("%d events entered; want 0", n)
	}

	// By hand, the control database refuses the same.
	_, err := p.Env.Control.Exec(ctx, `INSERT INTO operator_event (farm_id, from_at, to_at, category_id, note, entered_by)
		SELECT 'grid', $1, $2, id, E'order\u202e 4711', 'ops-anna' FROM availability_category WHERE code = 'requested_shutdown'`, day, day.Add(time.Hour))
	if err == nil || !strings.Contains(err.Error(), "must be operator text") {
		t.Fatalf("INSERT INTO operator_event with U+202E in its note: %v; want refused", err)
	}

	// An event stored before the rule (a tab in its note) is voided; the
	// void's own words are held to it.
	testdb.Exec(t, p.Env.Control, `ALTER TABLE operator_event DISABLE TRIGGER operator_event_text`)
	old := testdb.Int(t, p.Env.Control, `INSERT INTO operator_event (farm_id, from_at, to_at, category_id, note, entered_by)
		SELECT 'grid', $1, $2, id, E'order\t4711', 'ops-anna' FROM availability_category WHERE code = 'requested_shutdown' RETURNING id`, day, day.Add(time.Hour))
	testdb.Exec(t, p.Env.Control, `ALTER TABLE operator_event ENABLE ALWAYS TRIGGER operator_event_text`)
	if _, err := event.Void(ctx, p.Env.Control, p.Client, old, "ops-ben", "wrong\u2069 farm", p.Now()); !errors.Is(err, event.ErrInvalid) ||
		!strings.Contains(err.Error(), "note: U+2069 at byte 5 is a bidi control") {
		t.Fatalf("void with U+2069 in its note: %v; want ErrInvalid naming it", err)
	}
	if _, err := p.Env.Control.Exec(ctx, `UPDATE operator_event SET voided_by = 'ops-ben', voided_at = now(), void_note = E'x\u200b' WHERE id = $1`, old); err == nil ||
		!strings.Contains(err.Error(), "must be operator text") {
		t.Fatalf("a void by hand with U+200B in its note: %v; want refused", err)
	}
	if _, err := event.Void(ctx, p.Env.Control, p.Client, old, "ops-ben", "the order was for another farm", p.Now()); err != nil {
		t.Fatalf("void of an event from before the rule: %v", err)
	}
	if n := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM operator_event WHERE voided_at IS NOT NULL`); n != 1 {
		t.Fatalf("%d events voided; want 1", n)
	}
}
