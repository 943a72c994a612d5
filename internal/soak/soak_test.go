package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/reading"
)

func TestSummarizeIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // 1..100 ms, unsorted
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	d := Summarize(ds)
	if d.N != 100 || d.P50 != 0.050 || d.P99 != 0.099 || d.Max != 0.100 || d.Mean != 0.0505 {
		t.Fatalf("Summarize(1..100 ms) = %+v, want n 100, p50 0.050, p99 0.099, max 0.100, mean 0.0505", d)
	}
	if got := Summarize(ds[:1]); got.P50 != 0.1 || got.P99 != 0.1 {
		t.Fatalf("one value: %+v, want every quantile 0.1", got)
	}
	if got := Summarize(nil); got != (Dist{}) {
		t.Fatalf("no value: %+v, want zeros", got)
	}
}

// TestDefaultFleetIsTheDesignPeak: 62,500 turbines at 2 s = 31,250
// readings/s, the design peak (a peak hour three times the average of 900
// million readings a day: 900,000,000 / 86,400 × 3 = 31,250), a file fleet.Parse accepts (with the farm replayed alone,
// 300 turbines more, sent nothing live), both replayed farms split
// 100/100/100 like Ardnave Point, and the zones put every live farm's
// local time between 07:00 and 17:00 and the replayed farms' between
// 03:00 and 04:00, whatever the hour.
func TestDefaultFleetIsTheDesignPeak(t *testing.T) {
	for h := range 24 {
		t0 := time.Date(2026, 11, 30, h, 17, 0, 0, time.UTC)
		fl, err := NewFleet(DefaultFleetConfig(), t0)
		if err != nil {
			t.Fatal(err)
		}
		if n := fl.Turbines(); n != 62_500 {
			t.Fatalf("%d turbines, want 62,500", n)
		}
		farms := []*Farm{fl.Alone}
		for i := range fl.Farms {
			farms = append(farms, &fl.Farms[i])
		}
		for _, f := range farms {
			local := t0.In(f.Loc).Hour()
			if f.ID == "replayed" || f.ID == "replayed-alone" {
				if local != 3 {
					t.Fatalf("t0 %s: the replayed farm's local hour is %d, want 3", t0, local)
				}
				// Its backlog holds a local midnight.
				if localday.Of(t0.Add(-fl.Config.Backlog), f.Loc) == localday.Of(t0, f.Loc) {
					t.Fatalf("t0 %s: the backlog does not span a local midnight", t0)
				}
				continue
			}
			if local < 7 || local > 16 {
				t.Fatalf("t0 %s: farm %s (%s) local hour %d, want 7..16", t0, f.ID, f.Zone, local)
			}
		}
		if h != 9 {
			continue
		}
		plan, err := fleet.Parse("soak", strings.NewReader(fl.YAML()))
		if err != nil {
			t.Fatalf("the fleet file does not parse: %v", err)
		}
		if len(plan.Turbines) != 62_800 || len(plan.Farms) != 42 || len(plan.Shards) != 4 {
			t.Fatalf("plan: %d turbines, %d farms, %d shards; want 62,800, 42, 4", len(plan.Turbines), len(plan.Farms), len(plan.Shards))
		}
		per := map[string]map[string]int{"replayed": {}, "replayed-alone": {}}
		for _, tb := range plan.Turbines {
			if p := per[tb.FarmID]; p != nil {
				p[tb.Shard]++
				if !tb.CommissionedAt.Equal(t0.Add(-fl.Config.Backlog)) {
					t.Fatalf("%s commissioned %v, want the backlog's start", tb.ID, tb.CommissionedAt)
				}
			}
		}
		for farm, p := range per {
			if p["s1"] != 100 || p["s2"] != 100 || p["s3"] != 100 || len(p) != 3 {
				t.Fatalf("%s's turbines per shard: %v, want 100 on each of s1-s3", farm, p)
			}
		}
	}
}

// TestMovingChangesOnlyTheMovedTurbinesShard: the soak's move file puts
// 10 of the first farm's 1,555 turbines on s2 and leaves the rest, and
// the fleet it came from, as they were.
func TestMovingChangesOnlyTheMovedTurbinesShard(t *testing.T) {
	fl, err := NewFleet(DefaultFleetConfig(), time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	moved := fl.Moving(0, 10, "s2")
	plan, err := fleet.Parse("soak", strings.NewReader(moved.YAML()))
	if err != nil {
		t.Fatalf("the moved fleet file does not parse: %v", err)
	}
	per := map[string]int{}
	first := fl.Farms[0].ID
	for _, tb := range plan.Turbines {
		if tb.FarmID == first {
			per[tb.Shard]++
			if tb.ID == fl.Farms[0].TurbineID(10) && tb.Shard != "s2" || tb.ID == fl.Farms[0].TurbineID(11) && tb.Shard != "s1" {
				t.Fatalf("%s on %s", tb.ID, tb.Shard)
			}
		}
	}
	if per["s1"] != 1545 || per["s2"] != 10 || len(per) != 2 || len(plan.Turbines) != 62_800 {
		t.Fatalf("farm %s's turbines per shard: %v of %d turbines; want 1,545 on s1, 10 on s2 of 62,800 (the farm replayed alone kept)", first, per, len(plan.Turbines))
	}
	if got := fl.Farms[0].Shards[0]; got != "s1" {
		t.Fatalf("the original fleet's first turbine is on %s, want s1 (Moving changed it)", got)
	}
}

// TestReplayFileHoldsWhatItCounts reads the replay file back and counts
// it independently: the same windows, turbine-windows and closed days.
func TestReplayFileHoldsWhatItCounts(t *testing.T) {
	cfg := FleetConfig{LiveFarms: 1, TurbinesPerFarm: 2, Shards: 2, ReplayTurbines: 30, ReplayShards: 2, Backlog: 5 * time.Hour}
	t0 := time.Date(2026, 11, 30, 12, 41, 0, 0, time.UTC)
	fl, err := NewFleet(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rf, err := fl.WriteReplay(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 26 turbines report every other second for 5 h (9,000 readings
	// each), less 20 turbines' 20 silent minutes (600 readings each).
	if want := int64(26*9_000 - 20*600); rf.Lines != want {
		t.Fatalf("%d lines, want %d", rf.Lines, want)
	}
	if len(rf.Windows) != 300 {
		t.Fatalf("%d windows, want 300", len(rf.Windows))
	}
	f := fl.Replay()
	dec, err := reading.NewDecoder(reading.CSV, &buf)
	if err != nil {
		t.Fatal(err)
	}
	windows := map[time.Time]Count{}
	tws := map[TurbineWindow]Count{}
	days := map[TurbineDay]Count{}
	var lines int64
	for {
		rec, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || rec.Problem != "" {
			t.Fatalf("line %d: %v %s", lines+1, err, rec.Problem)
		}
		lines++
		r := rec.Reading
		ws := f.WindowStart(r.RecordedAt)
		tw := TurbineWindow{TurbineID: r.TurbineID, Start: ws}
		td := TurbineDay{TurbineID: r.TurbineID, Day: localday.Of(r.RecordedAt, f.Loc)}
		w, c, d := windows[ws], tws[tw], days[td]
		w.Received++
		c.Received++
		d.Received++
		if r.Available {
			w.Available++
			c.Available++
			d.Available++
		}
		windows[ws], tws[tw], days[td] = w, c, d
	}
	if lines != rf.Lines {
		t.Fatalf("read %d lines back, wrote %d", lines, rf.Lines)
	}
	for ws, c := range rf.Windows {
		if windows[ws] != *c {
			t.Fatalf("window %s: counted %+v, read back %+v", ws, *c, windows[ws])
		}
	}
	for tw, c := range rf.TurbineWindows {
		if tws[tw] != *c {
			t.Fatalf("%v: counted %+v, read back %+v", tw, *c, tws[tw])
		}
	}
	// t0 is 03:41 local: the day before holds 5 h - 3 h 41 min = 79 min of
	// service, 2,370 slots per turbine.
	if len(rf.ClosedDays) != 30 {
		t.Fatalf("%d closed turbine-days, want 30 (one day of 30 turbines)", len(rf.ClosedDays))
	}
	for td, dc := range rf.ClosedDays {
		if dc.Expected != 2_370 || dc.Count != days[td] {
			t.Fatalf("%v: %+v, want expected 2,370 and the file's %+v", td, *dc, days[td])
		}
	}
	if got := rf.ClosedDays[TurbineDay{TurbineID: "RP-001", Day: localday.Of(t0.Add(-5*time.Hour), f.Loc)}]; got == nil || got.Received != 0 {
		t.Fatalf("RP-001 (stopped): %+v, want nothing received", got)
	}
}

// fakeIngest stands in for serve's endpoint: it stores readings by key
// and answers in turn 503 naming lines 2-3 failed, 503 "full" (nothing
// read), a lost answer (stored, connection closed), and 200.
type fakeIngest struct {
	mu     sync.Mutex
	n      int
	stored map[string]reading.Reading
}

func (f *fakeIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.n++
	mode := f.n % 4
	f.mu.Unlock()
	if mode == 2 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(ingest.Summary{Error: "ingest pipeline is full: retry later"})
		return
	}
	dec, _ := reading.NewDecoder(reading.NDJSON, r.Body)
	var sum ingest.Summary
	for {
		rec, err := dec.Next()
		if err != nil {
			break
		}
		if mode == 1 && (rec.Line == 2 || rec.Line == 3) {
			sum.Failed++
			continue
		}
		key := rec.Reading.TurbineID + rec.Reading.RecordedAt.String()
		f.mu.Lock()
		if _, ok := f.stored[key]; ok {
			sum.Duplicate++
		} else {
			f.stored[key] = rec.Reading
			sum.Accepted++
		}
		f.mu.Unlock()
	}
	switch mode {
	case 1:
		sum.FailedLines = []ingest.LineRange{{From: 2, To: 3}}
		w.WriteHeader(http.StatusServiceUnavailable)
	case 3:
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	_ = json.NewEncoder(w).Encode(sum)
}

// TestSenderCountsWhatWasAcknowledged: through failed lines, a full
// pipeline and a lost answer, every reading ends up stored once, and the
// sender's acknowledged counts per farm-window are exactly what the server
// holds.
func TestSenderCountsWhatWasAcknowledged(t *testing.T) {
	cfg := FleetConfig{LiveFarms: 2, TurbinesPerFarm: 5, Shards: 1, ReplayTurbines: 3, ReplayShards: 1, Backlog: time.Hour}
	t0 := time.Now().UTC().Truncate(time.Minute)
	fl, err := NewFleet(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	srv := &fakeIngest{stored: map[string]reading.Reading{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	from := time.Now().Truncate(time.Second).Add(time.Second)
	s := &Sender{URL: ts.URL, Fleet: fl, Client: ts.Client(), From: from, To: from.Add(2 * time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("sender errors: %v", errs)
	}
	// 3 farms × 2 seconds; every turbine reports every other second, so
	// once: 5 + 5 + 3 = 13 readings.
	want := map[FarmWindow]Count{}
	for _, r := range srv.stored {
		f := &fl.Farms[slices.IndexFunc(fl.Farms, func(f Farm) bool { return strings.HasPrefix(r.TurbineID, f.Prefix) })]
		k := FarmWindow{FarmID: f.ID, Start: f.WindowStart(r.RecordedAt)}
		c := want[k]
		c.Received++
		if r.Available {
			c.Available++
		}
		want[k] = c
	}
	st := s.Stats()
	if len(srv.stored) != 13 || st.Readings != 13 || st.Bodies != 6 {
		t.Fatalf("server holds %d readings, the sender counts %d acknowledged over %d bodies; want 13, 13, 6", len(srv.stored), st.Readings, st.Bodies)
	}
	if got := s.Acked(); !mapsEqual(got, want) {
		t.Fatalf("acknowledged %v, the server holds %v", got, want)
	}
	if st.Duplicate == 0 || st.Resent == 0 || st.TransportErrors == 0 || st.Status[http.StatusServiceUnavailable] == 0 {
		t.Fatalf("stats %+v: want duplicates, re-sends, transport errors and 503s exercised", st)
	}
	req, acks, delays := s.Latencies()
	if len(req) != int(st.Requests) || len(acks) != 6 || len(delays) != 6 {
		t.Fatalf("%d request latencies for %d requests, %d ack latencies and %d delays for 6 bodies", len(req), st.Requests, len(acks), len(delays))
	}
}

// refusingIngest answers each body's first send 503 "full" (nothing
// read, a count of waiting bodies in the text), the second send of farm
// live-01's bodies 503 with line 1 failed (the rest stored), and stores
// every other send.
type refusingIngest struct {
	mu       sync.Mutex
	full     int
	attempts map[string]int
	stored   map[string]bool
}

func (f *refusingIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dec, _ := reading.NewDecoder(reading.NDJSON, r.Body)
	var recs []reading.Record
	for {
		rec, err := dec.Next()
		if err != nil {
			break
		}
		recs = append(recs, *rec)
	}
	first := recs[0].Reading
	prefix, _, _ := strings.Cut(first.TurbineID, "-")
	body := prefix + first.RecordedAt.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[body]++
	w.Header().Set("Retry-After", "1")
	var sum ingest.Summary
	switch {
	case f.attempts[body] == 1:
		f.full++
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(ingest.Summary{Error: fmt.Sprintf("ingest pipeline is full (%d bodies waiting): retry later", f.full)})
		return
	case f.attempts[body] == 2 && prefix == "L01":
		sum.Error = fmt.Sprintf("1 of %d lines failed (shard s1)", len(recs))
		sum.Failed, sum.FailedLines = 1, []ingest.LineRange{{From: 1, To: 1}}
		recs = recs[1:]
	}
	for _, rec := range recs {
		key := rec.Reading.TurbineID + rec.Reading.RecordedAt.String()
		if f.stored[key] {
			sum.Duplicate++
		} else {
			f.stored[key] = true
			sum.Accepted++
		}
	}
	if sum.Failed > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(sum)
}

// TestSenderGroupsRefusals: every 503 is counted under its error text with
// each run of digits as N, with the sender's wait for each, and the bodies
// refused at least once are counted once each: 3 farms × 2 seconds = 6
// bodies, all refused once as full (6 answers under one reason, whatever
// the count in the text), live-01's 2 then refused with a failed line (2
// answers), 8 answers 503 in all, and the 13 readings still stored once.
func TestSenderGroupsRefusals(t *testing.T) {
	cfg := FleetConfig{LiveFarms: 2, TurbinesPerFarm: 5, Shards: 1, ReplayTurbines: 3, ReplayShards: 1, Backlog: time.Hour}
	fl, err := NewFleet(cfg, time.Now().UTC().Truncate(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv := &refusingIngest{attempts: map[string]int{}, stored: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	from := time.Now().Truncate(time.Second).Add(time.Second)
	s := &Sender{URL: ts.URL, Fleet: fl, Client: ts.Client(), From: from, To: from.Add(2 * time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("sender errors: %v", errs)
	}
	st := s.Stats()
	if st.Bodies != 6 || st.BodiesRefused != 6 || st.Status[http.StatusServiceUnavailable] != 8 || st.Readings != 13 || st.Accepted != 13 || len(srv.stored) != 13 {
		t.Fatalf("stats %+v, server holds %d: want 6 bodies, 6 refused, 8 answers 503, 13 readings acknowledged, accepted and stored", st, len(srv.stored))
	}
	got := s.Refusals()
	want := []struct {
		reason  string
		answers int
	}{{"ingest pipeline is full (N bodies waiting): retry later", 6}, {"N of N lines failed (shard sN)", 2}}
	if len(got) != len(want) {
		t.Fatalf("refusals %+v, want %v", got, want)
	}
	for i, w := range want {
		if g := got[i]; g.Reason != w.reason || g.Answers != w.answers || g.Wait.N != w.answers || g.Wait.Max <= 0 || g.Wait.P50 > g.Wait.P99 || g.Wait.P99 > g.Wait.Max {
			t.Fatalf("refusal %d: %+v, want %q × %d with as many waits, 0 < p50 ≤ p99 ≤ max", i, g, w.reason, w.answers)
		}
	}
	if RefusalReason("") != "(no error text)" || RefusalReason("retry in 12 s, 3 waiting") != "retry in N s, N waiting" {
		t.Fatalf("RefusalReason: %q, %q", RefusalReason(""), RefusalReason("retry in 12 s, 3 waiting"))
	}
}

func mapsEqual(a, b map[FarmWindow]Count) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestProcessSamples(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
		t.Fatalf("this process: %+v, want 0 < PSS <= RSS", m)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if !slices.Contains(Children(os.Getpid()), cmd.Process.Pid) {
		t.Fatalf("Children(self) = %v, want it to hold sleep's %d", Children(os.Getpid()), cmd.Process.Pid)
	}
	tree, err := ReadTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree.N < 2 || tree.Mem.PSS < m.PSS/2 {
		t.Fatalf("tree %+v, want this process and sleep", tree)
	}
}

// TestMachineTimes: the machine's CPU and stall times turn into cores and
// shares of the sample's span, and this machine's /proc is read.
func TestMachineTimes(t *testing.T) {
	prev := sysTimes{busy: 1000, steal: 50, iowait: 20, cpuStall: 4_000_000, ioStall: 1_000_000}
	now := sysTimes{busy: 2500, steal: 150, iowait: 70, cpuStall: 6_000_000, ioStall: 6_000_000}
	busy, steal, iowait, cpuP, ioP := now.since(prev, 10)
	// 1,500 ticks of 1/100 s over 10 s = 1.5 cores; 100 ticks 0.1; 50
	// ticks 0.05; 2 s of CPU stall 0.2 of the time, 5 s of I/O stall 0.5.
	if busy != 1.5 || steal != 0.1 || iowait != 0.05 || cpuP != 0.2 || ioP != 0.5 {
		t.Fatalf("since: busy %v steal %v iowait %v cpu %v io %v, want 1.5 0.1 0.05 0.2 0.5", busy, steal, iowait, cpuP, ioP)
	}
	// A counter that could not be read (-1) gives 0, not a negative rate.
	if b, _, _, _, io := (sysTimes{busy: -1, ioStall: -1}).since(prev, 10); b != 0 || io != 0 {
		t.Fatalf("unreadable counters: busy %v io %v, want 0 0", b, io)
	}
	before := readSysTimes()
	if before.busy < 0 || before.iowait < 0 || before.steal < 0 {
		t.Fatalf("/proc/stat: %+v, want its counters", before)
	}
	// Half a second of this process's CPU (spun until its own counter says
	// so, however busy the machine) shows as at least 0.3 s busy.
	cpu := func() time.Duration {
		own, _, err := CPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		return own
	}
	for spun := cpu(); cpu()-spun < 500*time.Millisecond; {
	}
	after := readSysTimes()
	if got := float64(after.busy-before.busy) / clockTicks; got < 0.3 {
		t.Fatalf("machine busy over 0.5 s of spinning: %.2f s, want at least 0.3", got)
	}
}
