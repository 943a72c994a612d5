package demo

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
)

// Feed is the live simulated feed: every turbine of the fleet takes a
// reading every cadence (internal/simulate: the fleet's clock offsets and
// its arrival-delay mixture), and each reading is ingested once its
// received_at has come, through the same ingest pipeline as
// POST /v1/readings. Most arrive within 5 s; the mixture's tail arrives
// minutes to hours later, in the backfill lane, and marks the windows the
// fast path already published, which the drain's jobs then correct. A
// reading still on its way when the process stops is lost, as a farm's
// buffer would be.
//
// Like a farm's gateway that sends what arrives as it arrives and its
// backlog on the side, the feed delivers the readings that arrive behind
// their recorded_at by more than their farm's lane threshold (the backfill
// lane) in a body of their own, in the background: a tick's prompt
// readings never wait for a backfill write (which yields to every other
// live write, and queues behind a replay such as the story's).
type Feed struct {
	in     *ingest.Ingestor
	groups []*feedGroup
	// since is the latest of the farms' first slots (Since).
	since time.Time
	// waiting are readings generated whose received_at has not come yet.
	waiting arrivals
	late    sync.WaitGroup // the background delivery of late readings

	mu    sync.Mutex
	stats FeedStats
	// lateDue are late readings due and not handed to ingest yet;
	// lateSending how many are being ingested (0: no delivery running).
	lateDue     []reading.Record
	lateSending int
	heapLen     int // waiting.Len() at the last Step, for Stats
}

// feedGroup is the turbines of one cadence: their slots are a grid of that
// cadence, so every call to the generator stays on it.
type feedGroup struct {
	cfg  simulate.Config
	step time.Duration
	next time.Time // the first slot not generated yet
}

// FeedStats is what the feed has done so far.
type FeedStats struct {
	Turbines int
	// PerSecond is the fleet's reading rate (each turbine 1 / its cadence).
	PerSecond float64
	// Through: every slot before it has been generated. LastStep is the
	// clock's reading at the last delivery.
	Through, LastStep time.Time
	// Generated readings; of those Delivered to ingest (its answer
	// received), and Waiting: for their received_at, or late ones for
	// their background delivery.
	Generated, Delivered, Waiting int64
	// Ingest sums the ingest summaries of every delivery.
	Ingest ingest.Summary
	// Errors counts deliveries that did not fully succeed; their failed
	// rows are re-sent by the background delivery, as a real sender
	// re-sends what was not acknowledged (Resent counts them), so they are
	// in Waiting until stored, and not in Ingest.Failed. LastError is the
	// last such delivery's error.
	Errors    int
	Resent    int64
	LastError string
}

// NewFeed builds the feed of every turbine of plan, each farm's starting
// with the window in progress at start, so that the first window it feeds
// is whole rather than begun before the demo (the readings of the slots
// before start arrive with the first Step, as a gateway sends what it
// holds). seed fixes the clock offsets and delays.
func NewFeed(plan *fleet.Plan, seed uint64, start time.Time, in *ingest.Ingestor) (*Feed, error) {
	if len(plan.Turbines) == 0 {
		return nil, fmt.Errorf("live feed: the fleet has no turbines")
	}
	ids := make([]string, len(plan.Turbines))
	for i, t := range plan.Turbines {
		ids[i] = t.ID
	}
	// One set of offsets for the whole fleet, as FarmConfig does: a
	// turbine's clock is off by the same amount whichever group it is in.
	offsets := simulate.ClockOffsets(ids, seed)
	byCadence := map[int][]fleet.Turbine{}
	farmFrom := map[string]time.Time{}
	first := start
	f := &Feed{in: in}
	for _, t := range plan.Turbines {
		r := in.Routes().Lookup(t.ID)
		from, ok := farmFrom[t.FarmID]
		if !ok {
			from = windowInProgress(r, start)
			farmFrom[t.FarmID] = from
			first = earliest(first, from)
			if from.After(f.since) {
				f.since = from
			}
		}
		// A turbine reports from when the registry has it in service (a
		// fleet applied just now: from then), by its own clock.
		if r != nil && r.CommissionedAt != nil {
			if c := r.CommissionedAt.Add(-offsets[t.ID]); c.After(from) {
				from = c
			}
		}
		t.CommissionedAt = &from
		byCadence[t.CadenceSeconds] = append(byCadence[t.CadenceSeconds], t)
	}
	f.stats.Turbines = len(ids)
	for _, cad := range slices.Sorted(maps.Keys(byCadence)) {
		step := time.Duration(cad) * time.Second
		next := first.Truncate(step)
		if next.Before(first) {
			next = next.Add(step)
		}
		cfg := simulate.Config{Turbines: byCadence[cad], Seed: seed, Offsets: offsets, Delay: slices.Clone(simulate.DefaultDelay)}
		cfg.From, cfg.To = next, next
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("live feed: %w", err)
		}
		f.groups = append(f.groups, &feedGroup{cfg: cfg, step: step, next: next})
		f.stats.PerSecond += float64(len(byCadence[cad])) / float64(cad)
	}
	f.stats.Through = f.through()
	return f, nil
}

// windowInProgress is the start of the window of r's farm that holds
// start (start itself without a route or calendar).
func windowInProgress(r *ingest.Route, start time.Time) time.Time {
	if r == nil || len(r.Calendar) == 0 {
		return start
	}
	_, dayStart, _, v := r.Calendar.DayOf(start)
	if v.Window <= 0 {
		return start
	}
	return dayStart.Add(start.Sub(dayStart) / v.Window * v.Window)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Since is when the feed feeds every farm: the latest of the farms' first
// slots (each the start of its window in progress at the feed's start). A
// farm's windows that end by then have nothing from the feed; every later
// one is fed whole.
func (f *Feed) Since() time.Time { return f.since }

func (f *Feed) through() time.Time {
	t := f.groups[0].next
	for _, g := range f.groups[1:] {
		if g.next.Before(t) {
			t = g.next
		}
	}
	return t
}

// Stats returns what the feed has done so far.
func (f *Feed) Stats() FeedStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Step generates every slot before now and ingests, in one delivery, every
// reading whose received_at is not after now, but for the late ones: those
// are handed to the background delivery (started when none runs), which
// ends with ctx (Wait waits for it). It is not safe to call Step
// concurrently; Stats is.
func (f *Feed) Step(ctx context.Context, now time.Time) error {
	var recs []reading.Record
	var generated int64
	for _, g := range f.groups {
		if !g.next.Before(now) {
			continue
		}
		g.cfg.From, g.cfg.To = g.next, now
		n := int64(0)
		_, err := simulate.Generate(g.cfg, func(r *reading.Reading) error {
			n++
			if r.ReceivedAt.After(now) {
				heap.Push(&f.waiting, *r)
			} else {
				recs = append(recs, reading.Record{Reading: *r})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("live feed: %w", err)
		}
		generated += n
		slots := (now.Sub(g.next) + g.step - 1) / g.step
		g.next = g.next.Add(slots * g.step)
	}
	for f.waiting.Len() > 0 && !f.waiting[0].ReceivedAt.After(now) {
		recs = append(recs, reading.Record{Reading: heap.Pop(&f.waiting).(reading.Reading)})
	}
	routes := f.in.Routes()
	var late []reading.Record
	prompt := recs[:0]
	for _, rec := range recs {
		if r := routes.Lookup(rec.Reading.TurbineID); r != nil && rec.Reading.ReceivedAt.Sub(rec.Reading.RecordedAt) > r.Rules.LaneThreshold {
			late = append(late, rec)
		} else {
			prompt = append(prompt, rec)
		}
	}
	for i := range prompt {
		prompt[i].Line = int64(i + 1)
	}
	var sum ingest.Summary
	var err error
	if len(prompt) > 0 {
		sum, err = f.in.Ingest(ctx, "demo:live", &records{recs: prompt})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	failed := f.settleLocked(prompt, sum, err)
	f.lateDue = append(f.lateDue, late...)
	f.lateDue = append(f.lateDue, failed...)
	if f.lateSending == 0 && len(f.lateDue) > 0 && ctx.Err() == nil {
		send := f.lateDue
		f.lateDue, f.lateSending = nil, len(send)
		f.late.Add(1)
		go f.deliverLate(ctx, send)
	}
	f.stats.Through, f.stats.LastStep = f.through(), now
	f.stats.Generated += generated
	f.heapLen = f.waiting.Len()
	f.stats.Waiting = f.waitingLocked()
	if err != nil {
		return fmt.Errorf("live feed: %d readings delivered, %d not stored (re-sent): %w", len(prompt), len(failed), err)
	}
	return nil
}

// settleLocked books one delivery of sent: the rows ingest answered for are
// delivered and summed; the failed ones (the lines in sum.FailedLines) are
// returned to be re-sent. f.mu is held.
func (f *Feed) settleLocked(sent []reading.Record, sum ingest.Summary, err error) []reading.Record {
	var failed []reading.Record
	if err != nil || sum.Failed > 0 {
		f.stats.Errors++
		if err != nil {
			f.stats.LastError = err.Error()
		}
		for _, r := range sum.FailedLines {
			for l := r.From; l <= r.To && l >= 1 && l <= int64(len(sent)); l++ {
				rec := sent[l-1]
				rec.Line = 0
				failed = append(failed, rec)
			}
		}
		f.stats.Resent += int64(len(failed))
		sum.Failed -= int64(len(failed))
	}
	f.stats.Delivered += int64(len(sent) - len(failed))
	f.stats.Ingest = f.stats.Ingest.Plus(sum)
	return failed
}

// waitingLocked is Stats' Waiting; f.mu is held.
func (f *Feed) waitingLocked() int64 {
	return int64(f.heapLen + len(f.lateDue) + f.lateSending)
}

// deliverLate ingests late readings, one body at a time, taking what came
// due meanwhile, until none is left or ctx ends.
func (f *Feed) deliverLate(ctx context.Context, send []reading.Record) {
	defer f.late.Done()
	for len(send) > 0 {
		for i := range send {
			send[i].Line = int64(i + 1)
		}
		sum, err := f.in.Ingest(ctx, "demo:late", &records{recs: send})
		f.mu.Lock()
		failed := f.settleLocked(send, sum, err)
		send, f.lateDue = append(failed, f.lateDue...), nil
		if ctx.Err() != nil {
			// Stopped: what was due stays undelivered, as a buffer would.
			f.lateDue, send = send, nil
		}
		f.lateSending = len(send)
		f.stats.Waiting = f.waitingLocked()
		f.mu.Unlock()
		if len(failed) > 0 {
			// A sender backs off before it re-sends what failed.
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

// Wait returns once no late delivery runs (one ends with the ctx of the
// Step that started it).
func (f *Feed) Wait() { f.late.Wait() }

// arrivals is a min-heap of readings by received_at.
type arrivals []reading.Reading

func (a arrivals) Len() int { return len(a) }
func (a arrivals) Less(i, j int) bool {
	return cmp.Or(a[i].ReceivedAt.Compare(a[j].ReceivedAt), cmp.Compare(a[i].TurbineID, a[j].TurbineID)) < 0
}
func (a arrivals) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *arrivals) Push(x any)   { *a = append(*a, x.(reading.Reading)) }
func (a *arrivals) Pop() any {
	old := *a
	r := old[len(old)-1]
	*a = old[:len(old)-1]
	return r
}

// records serves a slice of records as a reading.Decoder.
type records struct {
	recs []reading.Record
	i    int
}

func (r *records) Next() (*reading.Record, error) {
	if r.i == len(r.recs) {
		return nil, io.EOF
	}
	r.i++
	return &r.recs[r.i-1], nil
}
