package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/simulate"
)

// prior is what an earlier run left of the story's day.
type prior int

const (
	fresh     prior = iota // nothing rolled up: the whole story is delivered
	dayStored              // the day phase's counts: only the replay is
	played                 // the story's final counts: nothing is
	other                  // anything else (a run stopped half-way): the whole story again
)

// survey waits until nothing is pending on the story's day, then says
// what an earlier run left of it.
func (d *Demo) survey(ctx context.Context) (prior, Observation, error) {
	seen, err := d.await(ctx, "what an earlier run left", func(o Observation) bool { return o.Settled() }, false)
	switch {
	case err != nil:
		return fresh, seen, err
	case !seen.Found:
		return fresh, seen, nil
	case seen.Counts == d.story.Final:
		return played, seen, nil
	case seen.Counts == d.story.AfterDay:
		return dayStored, seen, nil
	}
	return other, seen, nil
}

// intro says what is about to happen, when, and where to look.
func (d *Demo) intro(before prior) {
	var b strings.Builder
	fmt.Fprintf(&b, "the Galewatch demo (times UTC; Ctrl-C stops it, then `make db-down` stops the database)")
	if d.feed != nil {
		st := d.feed.Stats()
		fmt.Fprintf(&b, "\nlive feed: %d farms, %s turbines, %s readings/s (each turbine one per cadence, with the fleet's clock offsets and delays),"+
			"\n  from %s (the window in progress), ingested as they arrive; the fast path publishes every farm's windows once they are a"+
			"\n  window plus the allowed lateness old, so the tiles move every minute (%s's windows: %s, published %s after they end);"+
			"\n  a window before %s is before the demo: a tile showing one says so",
			len(d.cfg.Plan.Farms), provenance.Count(int64(st.Turbines)), trimFloat(st.PerSecond), hms(d.FeedFrom()), simulate.ArdnaveFarm, d.window(), d.lateness(), hms(d.FeedFrom()))
	}
	if s := d.story; s != nil {
		dayAt, replayAt := d.start.Add(d.cfg.DayAfter), d.start.Add(d.cfg.ReplayAfter)
		fmt.Fprintf(&b, "\nthe Ardnave Saturday, played on the clock on %s (%s), %s:", s.Farm, s.Location, s.Day.UTC().Format("Monday 2006-01-02"))
		when, replayWhen := hms(dayAt), hms(replayAt)
		switch before {
		case played:
			when, replayWhen = "earlier ", "earlier "
		case dayStored:
			when = "earlier "
		}
		fmt.Fprintf(&b, "\n  %s  the day as the link delivered it: %s readings; link down %s-%s local, the writer lost %s-%s,",
			when, provenance.Count(s.DayReadings), localHM(s.Outage.From, s.Location), localHM(s.Outage.To, s.Location),
			localHM(s.Outage.LostFrom, s.Location), localHM(s.Outage.LostTo, s.Location))
		fmt.Fprintf(&b, "\n            %d of %d turbines stopped all day (%s)", len(s.Stopped), s.Turbines, strings.Join(s.Stopped, ", "))
		fmt.Fprintf(&b, "\n            expect, once the drain has rolled it up (a minute or two): %s (%s): the hole counted against the farm,",
			pct(s.AfterDay.Availability()), counts(s.AfterDay))
		fmt.Fprintf(&b, "\n            and the day incomplete by the report's rule: settled, but too many slots without a reading to be final")
		fmt.Fprintf(&b, "\n  %s  the replay of what the writer lost: %s readings, %s-%s local (not before the day's number is out)",
			replayWhen, provenance.Count(s.ReplayReadings), localHM(s.Outage.LostFrom, s.Location), localHM(s.Outage.LostTo, s.Location))
		fmt.Fprintf(&b, "\n            expect within a minute or so: %s, final (%s); nothing is run by hand", pct(s.Final.Availability()), counts(s.Final))
		switch before {
		case played:
			fmt.Fprintf(&b, "\n  an earlier run played all of it on this day: nothing is delivered again (--demo-saturday places it on another past day)")
		case dayStored:
			fmt.Fprintf(&b, "\n  an earlier run delivered the day: only the replay follows")
		}
	}
	fmt.Fprintf(&b, "\nlook at:")
	if u := d.cfg.URL; u != "" {
		fmt.Fprintf(&b, "\n  %s/  the status page: the story's day on top, then the fleet table (contractual availability against the warranty, worst first),"+
			"\n    the pipeline's details folded under it", u)
		if s := d.story; s != nil {
			fmt.Fprintf(&b, "\n  %s/farms/%s?month=%s  the farm's month: the Saturday's bar, its contractual and production-based figures and lost MWh", u, s.Farm, s.Day.UTC().Format("2006-01"))
			fmt.Fprintf(&b, "\n  %s/farms/%s/days/%s  the day: its status, windows and turbines", u, s.Farm, s.Day)
			fmt.Fprintf(&b, "\n  %s/api/v1/farms/%s/days?from=%s&to=%s  the same as JSON", u, s.Farm, s.Day, s.Day)
		}
		fmt.Fprintf(&b, "\n  %s/riverui/  the jobs: publish_windows (every 2 s), drain_dirty, and the rollup_day jobs late readings cause", u)
	}
	if s := d.story; s != nil {
		fmt.Fprintf(&b, "\n  psql \"$(bin/orchestrator db url)\" -c \"SELECT day, path, windows, final_windows, expected, received, available, pending FROM day_provenance WHERE farm_id = '%s' AND day = '%s'\"",
			s.Farm, s.Day)
		fmt.Fprintf(&b, "\n  psql \"$(bin/orchestrator db url)\" -c \"SELECT day, expected, received, available, availability, completeness, computed_after_day_end, pending FROM farm_day WHERE farm_id = '%s' AND day = '%s'\"",
			s.Farm, s.Day)
		fmt.Fprintf(&b, "\n  psql \"$(bin/orchestrator db url)\" -c \"SELECT day, contract, contractual_availability, time_based_availability, production_based_availability, lost_wh, category_lost_wh FROM farm_day_contract WHERE farm_id = '%s' AND day = '%s'\"",
			s.Farm, s.Day)
	}
	d.out.say("%s", b.String())
}

func (d *Demo) window() string {
	if r := d.ardnaveRoute(); r != nil {
		return span(r.Rules.Window)
	}
	return "?"
}

func (d *Demo) lateness() string {
	if r := d.ardnaveRoute(); r != nil {
		return span(r.Rules.AllowedLateness)
	}
	return "?"
}

func (d *Demo) ardnaveRoute() *ingest.Route {
	for _, t := range d.cfg.Plan.Turbines {
		if t.FarmID == simulate.ArdnaveFarm {
			return d.in.Routes().Lookup(t.ID)
		}
	}
	return nil
}

// play delivers the story's phases on the clock and reports what the
// pipeline makes of each. A phase an earlier run already delivered (the
// farm-day reads exactly its counts) is not delivered again.
func (d *Demo) play(ctx context.Context, before prior, seen Observation) error {
	s := d.story
	switch before {
	case played:
		d.out.say("%s %s: played by an earlier run:\n%s", s.Farm, s.Day, d.describe(seen))
		d.emit(Event{Phase: "played", Seen: seen, AsExpected: seen.Final()})
		return nil
	case dayStored:
		d.out.say("%s %s: the day phase is stored from an earlier run; the replay follows:\n%s", s.Farm, s.Day, d.describe(seen))
	case other:
		d.out.say("%s %s already holds readings (%s): delivering the whole story; what is stored counts as duplicates, not twice", s.Farm, s.Day, counts(seen.Counts))
	}
	if before != dayStored {
		if err := d.wait(ctx, d.start.Add(d.cfg.DayAfter)); err != nil {
			return err
		}
		if err := d.phase(ctx, simulate.PhaseDay, d.start.Add(d.cfg.DayAfter), s.AfterDay, false); err != nil {
			return err
		}
	}
	if err := d.wait(ctx, d.start.Add(d.cfg.ReplayAfter)); err != nil {
		return err
	}
	return d.phase(ctx, simulate.PhaseReplay, d.start.Add(d.cfg.ReplayAfter), s.Final, true)
}

// phase delivers one phase, then waits for the pipeline to roll it up and
// says what the farm-day reads.
func (d *Demo) phase(ctx context.Context, phase string, due time.Time, want Counts, replay bool) error {
	s := d.story
	at := d.cfg.Clock.Now()
	what := "the day as the link delivered it"
	if phase == simulate.PhaseReplay {
		what = "the replay of " + localHM(s.Outage.LostFrom, s.Location) + "-" + localHM(s.Outage.LostTo, s.Location)
	}
	d.out.say("%s %s: delivering %s", s.Farm, s.Day, what)
	sum, attempts, err := d.deliver(ctx, phase, at)
	if err != nil {
		return fmt.Errorf("%s phase: %w", phase, err)
	}
	d.out.say("  ingested: %s accepted (%s live lane, %s backfill lane), %s duplicates, %s rejected, %s farm-day-shards marked dirty",
		provenance.Count(sum.Accepted), provenance.Count(sum.Live), provenance.Count(sum.Backfill), provenance.Count(sum.Duplicate), provenance.Count(sum.Rejected), provenance.Count(sum.DirtyMarks))
	if sum.Rejected > 0 && len(sum.Rejects) > 0 {
		d.out.say("  first reject: line %d: %s", sum.Rejects[0].Line, sum.Rejects[0].Reason)
	}
	// The day phase ends incomplete by the report's rule (settled, but a
	// quarter of its slots have no reading: the story's trap, named); the
	// replay's, final.
	status := report.StatusIncomplete
	if replay {
		status = report.StatusFinal
	}
	ok := func(o Observation) bool { return o.Counts == want && o.Settled() && o.Found && o.Status == status }
	seen, err := d.await(ctx, "the "+phase+" phase rolled up", ok, true)
	if err != nil {
		return err
	}
	if !ok(seen) {
		d.out.say("%s %s after %s, not %s as the story expects (readings other than the story's on that day? --demo-saturday places it on another):\n%s",
			s.Farm, s.Day, d.cfg.Patience, counts(want), d.describe(seen))
	} else if !replay {
		d.out.say("%s %s after the day phase, two numbers from one database:\n%s", s.Farm, s.Day, d.describe(seen))
		d.out.say("  %s of the day's %s slots never arrived. The windows shown leave the hole out of both sides of the ratio (the\n"+
			"  streaming answer); the day counts it against the farm (the batch answer, what the monthly report sums). The day\n"+
			"  has ended, was rolled up after it closed and nothing is pending, yet it is %s, not final: that much information\n"+
			"  unavailable would otherwise pass for a final day, and the month cannot be signed until the readings arrive or an operator\n"+
			"  accepts the day (orchestrator day accept)", provenance.Count(seen.Expected-seen.Received), provenance.Count(seen.Expected), seen.Status)
	} else {
		d.out.say("%s %s after the replay: %s %s\n%s", s.Farm, s.Day, pct(seen.Availability()), seen.Status, d.describe(seen))
		d.out.say("  the replay marked the windows it filled, the drain turned the marks into rollup_day jobs, and they rewrote the windows and the day")
	}
	d.emit(Event{Phase: phase, Due: due, Delivered: at, Ingest: &sum, Attempts: attempts, Seen: seen, AsExpected: ok(seen)})
	return nil
}

// maxAttempts bounds how often a phase's failed lines are re-sent.
const maxAttempts = 5

// deliver ingests a phase and, like any sender, re-sends the lines ingest
// could not store (a shard down, a write transaction that ran out of time
// behind a recompute of the same day): what was stored meanwhile counts as
// a duplicate. The summary adds up the attempts (lanes: the first's).
func (d *Demo) deliver(ctx context.Context, phase string, at time.Time) (ingest.Summary, int, error) {
	var total ingest.Summary
	var lines []ingest.LineRange
	for attempt := 1; ; attempt++ {
		sum, err := d.story.Phase(ctx, d.in, phase, at, lines)
		if attempt == 1 {
			total = sum
		} else {
			total = total.Plus(ingest.Summary{Accepted: sum.Accepted, Duplicate: sum.Duplicate, Rejected: sum.Rejected, DirtyMarks: sum.DirtyMarks})
		}
		total.Failed, total.FailedLines, total.Error = sum.Failed, sum.FailedLines, sum.Error
		if err == nil || sum.Failed == 0 || ctx.Err() != nil || attempt == maxAttempts {
			return total, attempt, err
		}
		d.out.say("  %s readings not stored (%v); re-sending them", provenance.Count(sum.Failed), err)
		lines = sum.FailedLines
		if err := d.wait(ctx, d.cfg.Clock.Now().Add(5*time.Second)); err != nil {
			return total, attempt, err
		}
	}
}

// await polls the story's farm-day until ok, or Patience has passed (it
// then returns the last observation).
// With progress, each new state of the day on the way is said in a line
// (the status page shows the same).
func (d *Demo) await(ctx context.Context, what string, ok func(Observation) bool, progress bool) (Observation, error) {
	deadline := d.cfg.Clock.Now().Add(d.cfg.Patience)
	var last Observation
	for {
		o, err := d.story.Observe(ctx, d.control, d.cfg.Clock.Now())
		if err != nil {
			return o, fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok(o) || !o.At.Before(deadline) {
			return o, nil
		}
		if progress && o.Found && (o.Counts != last.Counts || o.Status != last.Status || o.Why != last.Why) {
			status := o.Status
			if o.Why != "" {
				status += ": " + o.Why
			}
			d.out.say("  meanwhile the day reads %s %s (%s)", pct(o.Availability()), status, counts(o.Counts))
		}
		last = o
		select {
		case <-ctx.Done():
			return o, ctx.Err()
		case <-d.cfg.Clock.After(d.cfg.Poll):
		}
	}
}

func (d *Demo) emit(e Event) {
	if d.cfg.OnEvent != nil {
		d.cfg.OnEvent(e)
	}
}

// describe says what the farm-day reads both ways (Observation).
func (d *Demo) describe(o Observation) string {
	if !o.Found {
		return "  nothing rolled up yet"
	}
	status := o.Status
	if o.Why != "" {
		status += ": " + o.Why
	}
	of := ""
	if d.story.Windows > 0 {
		of = fmt.Sprintf(" of the day's %s", provenance.Count(int64(d.story.Windows)))
	}
	pending := "nothing pending"
	if o.WindowsPending {
		pending = "a recompute pending"
	}
	return fmt.Sprintf("  the day (%s, as the status page and the monthly report show it): %s %s (%s; completeness %s)\n"+
		"  its windows as shown (day_provenance, the tiles' path):          %s over %s%s windows, %s final, %s",
		o.Source, pct(o.Availability()), status, counts(o.Counts), pct(o.Completeness()),
		pct(o.Shown.Availability()), provenance.Count(int64(o.Windows)), of, provenance.Count(int64(o.FinalWindows)), pending)
}

func counts(c Counts) string {
	return fmt.Sprintf("expected %s, received %s, available %s", provenance.Count(c.Expected), provenance.Count(c.Received), provenance.Count(c.Available))
}

func span(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d s", int(d/time.Second))
}

func trimFloat(f float64) string {
	if f == float64(int64(f)) {
		return provenance.Count(int64(f))
	}
	return fmt.Sprintf("%.1f", f)
}
