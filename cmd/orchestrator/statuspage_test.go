package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// The browser check: the real pipeline (ingest, fast path, dirty marks,
// drain, River rollup jobs) runs four days of a small farm on a simulated
// clock, then serve's own HTTP server (httpServer: status page, API, River
// UI, behind the token) is rendered by headless Chromium.
//
// Ardnave Mini: 6 turbines (AM-001..004 on s1, AM-005..006 on s2), one
// reading every 30 s (2,880 slots per turbine-day, 17,280 per farm-day),
// 1 h windows published 6 h after they end (allowed lateness 6 h, so the
// story needs a step every 6 hours, not every hour). A reading normally
// arrives 1 s after it is taken. In August 2026 (Europe/London):
//
//	08-01 the writer loses every reading of 07:00-09:00 (1,440 slots); they
//	      are replayed on 08-04 at 05:00, long after the day closed: marks,
//	      drain and a recompute put them in. AM-006 is stopped 14:00-18:00
//	      (480 slots unavailable). Final: completeness 100 %, availability
//	      16,800 / 17,280 = 97.22 %; the fast rows had 15,840 received and
//	      15,360 available: 83.33 / 85.71 per mille of the final, an alert.
//	08-02 whole: 100 %.
//	08-03 AM-002's radio is dead 20:00-22:00 (240 slots silent); AM-005's
//	      readings of 16:00-17:00 arrive on 08-04 at 11:30, after the day
//	      closed; the drain asks for a recompute that has not run yet:
//	      provisional ("readings arrived after the rollup"), 16,920 of
//	      17,280 = 97.92 %.
//	08-04 in progress at 12:01:10: windows 00:00-06:00 published (at
//	      12:01:10), whole (4,320 slots): provisional, 100 %.
const miniFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: ardnave-mini
    name: Ardnave Mini
    timezone: Europe/London
    cadence_seconds: 30
    rules: {window: 1h, allowed_lateness: 6h}
    turbines:
      - {prefix: AM-, from: 1, to: 4, shard: s1}
      - {prefix: AM-, from: 5, to: 6, shard: s2}
`

// sliceDecoder serves readings to ingest.
type sliceDecoder struct {
	rs []reading.Reading
	i  int
}

func (d *sliceDecoder) Next() (*reading.Record, error) {
	if d.i == len(d.rs) {
		return nil, io.EOF
	}
	d.i++
	return &reading.Record{Line: int64(d.i), Reading: d.rs[d.i-1]}, nil
}

// miniReadings is the story's every reading, in the order they arrive.
func miniReadings(loc *time.Location) []reading.Reading {
	at := func(day, h, m int) time.Time { return time.Date(2026, 8, day, h, m, 0, 0, loc) }
	in := func(t time.Time, from, to time.Time) bool { return !t.Before(from) && t.Before(to) }
	var out []reading.Reading
	for n := 1; n <= 6; n++ {
		id := fmt.Sprintf("AM-%03d", n)
		for t := at(1, 0, 0); t.Before(at(4, 12, 0)); t = t.Add(30 * time.Second) {
			r := reading.Reading{TurbineID: id, RecordedAt: t, ReceivedAt: t.Add(time.Second), Available: true, PowerKW: 1500, WindMS: 9}
			switch {
			case in(t, at(1, 7, 0), at(1, 9, 0)):
				r.ReceivedAt = at(4, 5, 0) // lost, replayed on Tuesday
			case id == "AM-002" && in(t, at(3, 20, 0), at(3, 22, 0)):
				continue // dead radio
			case id == "AM-005" && in(t, at(3, 16, 0), at(3, 17, 0)):
				r.ReceivedAt = at(4, 11, 30)
			}
			if id == "AM-006" && in(t, at(1, 14, 0), at(1, 18, 0)) {
				r.Available, r.PowerKW = false, 0
			}
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b reading.Reading) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
	return out
}

// runMiniStory plays the story through the real pipeline; it returns with
// the clock at 08-04 12:01:10, the last delivery ingested and drained into
// a recompute request whose job has not run.
func runMiniStory(t *testing.T, m *Main, clock *pipelinetest.Clock, in *ingest.Ingestor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	loc, _ := time.LoadLocation("Europe/London")
	jc := jobs.DefaultConfig()
	jc.Periodic = false // the story drives the drain and the nightly close on its clock
	client, err := m.River(ctx, jc)
	testdb.Must(t, err, "river client")
	stop, err := jobs.Start(ctx, m.control, client, nil)
	testdb.Must(t, err, "start river")
	t.Cleanup(stop)
	control, shards := m.control, m.shards
	storyStart := at(loc, 1, 0)
	publisher := &publish.Publisher{Control: control, Shards: shards, Now: clock.Now}
	drainer := &drain.Drainer{Control: control, Shards: shards, Now: clock.Now}

	pending := miniReadings(loc)
	deliver := func() {
		n := 0
		for n < len(pending) && !pending[n].ReceivedAt.After(clock.Now()) {
			n++
		}
		if n == 0 {
			return
		}
		sum, err := in.Ingest(ctx, "story", &sliceDecoder{rs: pending[:n]})
		testdb.Must(t, err, "ingest at %s", clock.Now())
		if sum.Accepted != int64(n) {
			t.Fatalf("ingest at %s: %+v, want %d accepted", clock.Now(), sum, n)
		}
		pending = pending[n:]
	}
	// Every 6 hours, 10 s and 70 s past: deliver what has arrived (on-time
	// readings are written before their windows' mark threshold, end + 6 h
	// - 30 s; those of the first minute of a window, which may mark the
	// window before, well before that one's), publish what is due (the fast path starts with the story: its
	// catch-up reaches back to 08-01 00:00 and no further), drain the
	// marks, and at 06:00 close yesterday (its last window is past the
	// watermark then).
	last := at(loc, 4, 12)
	var tDeliver, tPublish, tJobs time.Duration
	defer func() {
		t.Logf("story: ingest %s, fast path %s, drain and rollup jobs %s", tDeliver.Round(time.Millisecond), tPublish.Round(time.Millisecond), tJobs.Round(time.Millisecond))
	}()
	for h := storyStart; !h.After(last); h = h.Add(6 * time.Hour) {
		t0 := time.Now()
		clock.Set(h.Add(10 * time.Second))
		deliver()
		clock.Set(h.Add(70 * time.Second))
		deliver()
		tDeliver += time.Since(t0)
		t0 = time.Now()
		publisher.CatchUp = clock.Now().Sub(storyStart)
		_, err := publisher.PublishDue(ctx)
		testdb.Must(t, err, "publish at %s", clock.Now())
		tPublish += time.Since(t0)
		if h.Equal(last) {
			// AM-005's late readings of 08-03 are in: their marks become a
			// recompute request whose job waits (the workers are stopped).
			stop()
			if _, err := drainer.DrainImmediate(ctx, jobs.RollupDayEnqueue(client)); err != nil {
				t.Fatalf("drain at %s: %v", clock.Now(), err)
			}
			break
		}
		t0 = time.Now()
		if _, err := drainer.DrainImmediate(ctx, jobs.RollupDayEnqueue(client)); err != nil {
			t.Fatalf("drain at %s: %v", clock.Now(), err)
		}
		if h.In(loc).Hour() == 6 && h.After(storyStart.AddDate(0, 0, 1)) {
			yesterday := h.In(loc).AddDate(0, 0, -1).Format(time.DateOnly)
			_, err := jobs.EnqueueFarmDay(ctx, control, client, "ardnave-mini", yesterday, rollup.ReasonSchedule, jobs.PrioritySchedule)
			testdb.Must(t, err, "close %s", yesterday)
		}
		testdb.Must(t, jobs.WaitIdle(ctx, client, control, shards), "wait for the jobs at %s", clock.Now())
		tJobs += time.Since(t0)
	}
}

func at(loc *time.Location, day, hour int) time.Time {
	return time.Date(2026, 8, day, hour, 0, 0, 0, loc)
}

// artifactsDir is $GALEWATCH_ARTIFACTS, else test-artifacts/ at the
// repository root (git-ignored).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GALEWATCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(testdb.RepoRoot(t), "test-artifacts")
	}
	testdb.Must(t, os.MkdirAll(dir, 0o755), "artifacts folder")
	return dir
}

// chromium renders url headless in a window width × height: its DOM, and a
// screenshot saved as artifacts/<name>.png.
func chromium(t *testing.T, ctx context.Context, url, name string, width, height int) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("headless Chromium is needed for this test: apt-get install chromium (`make test` installs it when it can)")
	}
	run := func(args ...string) []byte {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--hide-scrollbars",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=20000"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	// One launch renders both: the DOM on stdout, the screenshot to its file.
	shot := filepath.Join(artifactsDir(t), name+".png")
	dom := string(run("--dump-dom", fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+shot, url))
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%v bytes)", shot, err, st)
	}
	t.Logf("screenshot: %s", shot)
	return dom
}

// TestStatusPageInChromium plays the story, then renders /, the farm page
// and the River UI in headless Chromium through serve's own server (with a
// token, added by a proxy as an operator's authenticating proxy would).
func TestStatusPageInChromium(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("headless Chromium is needed for this test: apt-get install chromium (`make test` installs it when it can)")
	}
	env := testdb.New(t, miniFleet)
	clock := pipelinetest.NewClock(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))
	cfg := ConfigFromEnv()
	cfg.DatabaseURL = env.ControlDSN
	m := &Main{Config: cfg, Now: clock.Now}
	defer m.Close()
	// 254 s beside a second make test, where 4 minutes killed Chromium.
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	in, err := m.Ingestor(ctx)
	testdb.Must(t, err, "ingestor")
	defer in.Close()
	start := time.Now()
	runMiniStory(t, m, clock, in)
	t.Logf("story played through the pipeline in %s", time.Since(start).Round(time.Millisecond))

	jc := jobs.DefaultConfig()
	jc.Periodic = false
	uiClient, err := m.River(ctx, jc) // not started: the UI reads the jobs the story ran
	testdb.Must(t, err, "river client for the UI")
	srvCfg := server.DefaultConfig()
	srvCfg.Token = "s3cret"
	srv, err := m.httpServer(ctx, srvCfg, in, uiClient, nil, 1<<20, 1)
	testdb.Must(t, err, "serve's server")
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, path := range []string{"/", "/riverui/", "/riverui/api/jobs?state=completed"} {
		if resp, err := http.Get(ts.URL + path); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s without the token: %v %v, want 401", path, resp, err)
		}
	}
	target, _ := neturl.Parse(ts.URL)
	mux := http.NewServeMux()
	mux.Handle("/", &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = target.Host
		r.Out.Header.Set("Authorization", "Bearer s3cret")
	}, ModifyResponse: func(resp *http.Response) error {
		// the measuring page frames the page it measures: only then is its
		// frame-ancestors rule lifted (the layout does not depend on it)
		if resp.Request.URL.Query().Has("measured") {
			resp.Header.Del("Content-Security-Policy")
		}
		return nil
	}})
	// /__measure frames a page at 1,400 px and writes how wide its content
	// is (scrollWidth) against the frame (clientWidth): wider overflows.
	mux.HandleFunc("/__measure", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:0"><pre id="out">pending</pre>
<iframe id="f" src="%s" style="width:1400px;height:900px;border:0"></iframe>
<script>document.getElementById("f").onload = function () {
  var d = this.contentDocument.documentElement;
  document.getElementById("out").textContent = "scrollWidth=" + d.scrollWidth + " clientWidth=" + d.clientWidth;
};</script></body></html>`, r.URL.Query().Get("path"))
	})
	proxy := httptest.NewServer(mux)
	defer proxy.Close()
	// overflow renders path framed at 1,400 px and returns how much wider
	// than the frame its content is (0: nothing overflows).
	overflow := func(t *testing.T, path, name string) int {
		t.Helper()
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		dom := chromium(t, ctx, proxy.URL+"/__measure?path="+neturl.QueryEscape(path+sep+"measured=1"), name, 1440, 950)
		var sw, cw int
		if m := regexp.MustCompile(`scrollWidth=(\d+) clientWidth=(\d+)`).FindStringSubmatch(dom); m == nil {
			t.Fatalf("measuring %s: no measurement in the DOM: %.400s", path, dom)
		} else {
			fmt.Sscan(m[1], &sw)
			fmt.Sscan(m[2], &cw)
		}
		if cw != 1400 {
			t.Fatalf("measuring %s: the frame is %d px wide, want 1400", path, cw)
		}
		return sw - cw
	}

	// The API's days, to hold the page to.
	var api struct {
		Days []struct {
			Day, Status                   string
			Expected, Received, Available int64
			Availability, Completeness    float64
			Divergence                    *struct{ PM float64 }
		}
	}
	resp, err := http.Get(proxy.URL + "/api/v1/farms/ardnave-mini/days")
	testdb.Must(t, err, "days API")
	testdb.Must(t, json.NewDecoder(resp.Body).Decode(&api), "days JSON")
	resp.Body.Close()
	type want struct {
		day, status                string
		expected, received, avail  int64
		availability, completeness string
		divergence                 bool
	}
	wants := []want{
		{"2026-08-01", "final", 17280, 17280, 16800, "97.22 %", "100.00 %", true},
		{"2026-08-02", "final", 17280, 17280, 17280, "100.00 %", "100.00 %", true},
		{"2026-08-03", "provisional", 17280, 16920, 16920, "97.92 %", "97.92 %", true},
		{"2026-08-04", "provisional", 4320, 4320, 4320, "100.00 %", "100.00 %", false},
	}
	if len(api.Days) != len(wants) {
		t.Fatalf("days API: %+v, want %d days", api.Days, len(wants))
	}
	for i, w := range wants {
		d := api.Days[i]
		if d.Day != w.day || d.Status != w.status || d.Expected != w.expected || d.Received != w.received || d.Available != w.avail ||
			fmt.Sprintf("%.2f %%", d.Availability*100) != w.availability || (d.Divergence != nil) != w.divergence {
			t.Errorf("days API %s: %+v, want %+v", w.day, d, w)
		}
	}
	// 08-01: the fast rows missed 07:00-09:00 (1,440 slots received and
	// available): 83.33 / 85.71 per mille of the final, an alert.
	if d := api.Days[0].Divergence; d == nil || fmt.Sprintf("%.2f", d.PM) != "85.71" {
		t.Errorf("08-01 divergence %+v, want 85.71 per mille", d)
	}

	t.Run("Overview", func(t *testing.T) {
		dom := chromium(t, ctx, proxy.URL+"/", "status-overview", 1400, 900)
		// The fleet table, as the asset manager reads it: contractual over
		// the rolled-up days 08-01..03 (default contract: 51,000 of 51,840
		// slots = 98.38 %), time-based to date 98.50 %, the page's warranty
		// (no contract gives one), no power curve (no production-based
		// figure, no lost energy), provisional with why.
		row := rowOf(t, dom, "fleet-ardnave-mini")
		for _, s := range []string{`<td class="num contractual">98.38 %</td>`, `<td class="num timebased">98.50 %</td>`,
			`<td class="num completeness">99.36 %</td>`, `97.0 %<div class="sub">page default</div>`, `<td class="num production">—</td>`,
			`<td class="num lost">—</td>`, `<span class="badge provisional">provisional</span>`, "not ended: 2026-08-04..2026-08-31", `href="/farms/ardnave-mini?month=2026-08"`} {
			if !strings.Contains(row, s) {
				t.Errorf("fleet table row lacks %q: %s", s, row)
			}
		}
		if i, j := strings.Index(dom, `id="fleet"`), strings.Index(dom, `<details class="internals">`); i < 0 || j < i {
			t.Errorf("the fleet table is not first, above the pipeline's details (at %d and %d)", i, j)
		}
		for _, s := range []string{">0 %<", ">100 %<"} {
			if !strings.Contains(svgOf(t, dom, "availability-ardnave-mini"), s) {
				t.Errorf("the availability axis lacks %q (it starts at 0 %%)", s)
			}
		}
		avail := svgOf(t, dom, "availability-ardnave-mini")
		div := svgOf(t, dom, "divergence-ardnave-mini")
		for _, c := range []struct {
			what  string
			got   int
			wantN int
		}{
			{"availability bars", strings.Count(avail, `<rect class="bar availability`), 4},
			{"hatched (provisional) availability bars", strings.Count(avail, `<rect class="bar availability provisional"`), 2},
			{"completeness points", strings.Count(avail, `<circle class="point completeness"`), 4},
			{"warranty lines", strings.Count(avail, `class="threshold warranty"`), 1},
			{"divergence bars", strings.Count(div, `<rect class="bar divergence`), 3},
			{"divergence bars above the threshold", strings.Count(div, `<rect class="bar divergence over"`), 1},
		} {
			if c.got != c.wantN {
				t.Errorf("overview: %d %s, want %d", c.got, c.what, c.wantN)
			}
		}
		for _, s := range []string{"August 2026", "Ardnave Mini", "warranty 97.00 %", "alert above 30 ‰", `<span class="v backlog">0 days</span>`, `<span class="v dirty-windows">2</span>`,
			"1 recompute queued", `<b class="month-availability">98.50 %</b>`, "held back: not ended: 2026-08-04..2026-08-31; readings arrived after the rollup: 2026-08-03"} {
			if !strings.Contains(dom, s) {
				t.Errorf("overview lacks %q: %s", s, regexp.MustCompile(`(?s)<div class="facts tile".*?</div>\s*</div>`).FindString(dom))
			}
		}
	})

	t.Run("FarmPage", func(t *testing.T) {
		dom := chromium(t, ctx, proxy.URL+"/farms/ardnave-mini", "status-farm", 1400, 1500)
		for i, w := range wants {
			row := rowOf(t, dom, "day-"+w.day)
			if !strings.Contains(row, `class="day `+w.status+`"`) || !strings.Contains(row, `<span class="badge `+w.status+`">`+w.status+`</span>`) {
				t.Errorf("farm page %s: not labelled %s: %s", w.day, w.status, row)
			}
			for _, s := range []string{w.availability, w.completeness, group3(api.Days[i].Expected), group3(api.Days[i].Received)} {
				if !strings.Contains(row, ">"+s+"<") {
					t.Errorf("farm page %s lacks %q (the API's number): %s", w.day, s, row)
				}
			}
		}
		if row := rowOf(t, dom, "day-2026-08-03"); !strings.Contains(row, "readings arrived after the rollup (recompute requested 2026-08-04 11:01:10 UTC)") {
			t.Errorf("08-03 does not say why it is provisional: %s", row)
		}
	})

	t.Run("NothingOverflowsAt1400px", func(t *testing.T) {
		for _, p := range []struct{ path, name string }{{"/", "measure-overview"}, {"/farms/ardnave-mini", "measure-farm"}} {
			if over := overflow(t, p.path, p.name); over > 0 {
				t.Errorf("%s at 1,400 px: content %d px wider than the page", p.path, over)
			}
		}
	})

	t.Run("DayPage", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, proxy.URL+"/farms/ardnave-mini/days/2026-08-03", nil)
		resp, err := http.DefaultClient.Do(req)
		testdb.Must(t, err, "day page")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		row := rowOf(t, string(b), "turbine-AM-002")
		if resp.StatusCode != 200 || !strings.Contains(row, "20–21") || strings.Count(row, `class="hour silent"`) != 2 || !strings.Contains(row, "91.67 %") {
			t.Errorf("08-03 AM-002: %d %s, want silent hours 20-21 and 91.67 %%", resp.StatusCode, row)
		}
	})

	t.Run("RiverUI", func(t *testing.T) {
		dom := chromium(t, ctx, proxy.URL+"/riverui/jobs?state=completed", "status-riverui", 1280, 900)
		for _, s := range []string{"rollup_day", "rollup_s1"} {
			if !strings.Contains(dom, s) {
				t.Fatalf("the River UI's completed jobs do not show %q (%d bytes of DOM): %.600s", s, len(dom), dom)
			}
		}
	})
}

func svgOf(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<svg[^>]*\bid="` + regexp.QuoteMeta(id) + `".*?</svg>`).FindString(dom)
	if m == "" {
		t.Fatalf("no <svg id=%q> in the rendered page", id)
	}
	return m
}

func rowOf(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr[^>]*\bid="` + regexp.QuoteMeta(id) + `".*?</tr>`).FindString(dom)
	if m == "" {
		t.Fatalf("no <tr id=%q> in the page", id)
	}
	return m
}

func group3(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
