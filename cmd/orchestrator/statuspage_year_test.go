package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// yearPageFleet: Yarrow Sound (2 turbines, UTC, one reading an hour: 24
// slots a turbine-day, 48 a farm-day) under a contract whose year runs
// from 1 April, warranty 97 %, LDs 1,000 GBP a point below it per
// turbine-year (capped at 5,000), a bonus above 98 %; Alder Moor, one
// turbine under the default contract (no warranty), sends nothing.
const yearPageFleet = `
shards: [{name: s1}]
farms:
  - id: alder
    name: Alder Moor
    timezone: UTC
    cadence_seconds: 3600
    rules: {window: 1h}
    turbines: [{id: AL-001, shard: s1}]
  - id: yarrow
    name: Yarrow Sound
    timezone: UTC
    cadence_seconds: 3600
    rules: {window: 1h}
    contract:
      name: Yarrow TSA
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_point: {amount: 1000, per: turbine}
      ld_cap: 5000
      bonus_above_pct: 98
      bonus_per_point: {amount: 500, per: turbine}
    turbines: [{prefix: YS-, from: 1, to: 2, shard: s1}]
`

// TestContractYearPagesInChromium: Yarrow Sound's contract year 2026
// (2026-04-01 to 2027-03-31, 365 days) through ingest and `work
// --until-idle` at 2026-05-11 12:00 UTC, rendered by headless Chromium.
//
// Readings every hour of 1-10 April and 1-10 May, all available, but
// YS-002 unavailable (0 kW) all of 1-5 May (120 slots of forced outage).
// April: 480 of 480 slots, 100 %. May: 360 of 480, 75.00 %, under the
// warranty. The year to date: 840 of 960 = 87.50 %, 9.5 points below:
// LDs 9.5 x 1,000 GBP x 40 turbine-days / 365 = 1,041.10 (under the cap),
// no bonus (not above 98 %). `work --until-idle` also rolls up every
// farm's yesterday, 10 May: Yarrow's is in the readings; Alder's has none
// (its month reads 0.00 %, no data, the lowest), so by the month alone
// Alder would be first; below its year's warranty, Yarrow is.
func TestContractYearPagesInChromium(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	env := testdb.New(t, yearPageFleet)
	now := time.Date(2026, 5, 11, 12, 0, 0, 0, time.UTC)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	m := &Main{Config: cfg, Now: func() time.Time { return now }}
	defer m.Close()

	var lines strings.Builder
	for _, first := range []time.Time{time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)} {
		for at := first; at.Before(first.AddDate(0, 0, 10)); at = at.Add(time.Hour) {
			for n := 1; n <= 2; n++ {
				down := n == 2 && at.Month() == time.May && at.Day() <= 5
				power := 2000
				if down {
					power = 0
				}
				fmt.Fprintf(&lines, `{"turbine_id":"YS-%03d","recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%d,"wind_ms":10}`+"\n",
					n, at.Add(5*time.Second).Format(time.RFC3339), at.Add(7*time.Second).Format(time.RFC3339), !down, power)
			}
		}
	}
	in, err := m.Ingestor(ctx)
	testdb.Must(t, err, "ingestor")
	defer in.Close()
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(lines.String()))
	testdb.Must(t, err, "decoder")
	sum, err := in.Ingest(ctx, "test", dec)
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 2*20*24 {
		t.Fatalf("ingest accepted %d, want %d", sum.Accepted, 2*20*24)
	}
	captureStdout(t, func() {
		w := &Main{Config: cfg, Now: m.Now}
		defer w.Close()
		cmd := w.Command()
		cmd.SetArgs([]string{"work", "--until-idle"})
		cmd.SetOut(&bytes.Buffer{})
		testdb.Must(t, cmd.ExecuteContext(ctx), "work --until-idle")
	})

	jc := jobs.DefaultConfig()
	jc.Periodic = false
	uiClient, err := m.River(ctx, jc) // not started: the pages need it mounted, nothing more
	testdb.Must(t, err, "river client for the UI")
	srv, err := m.httpServer(ctx, server.DefaultConfig(), in, uiClient, nil, 1<<20, 1)
	testdb.Must(t, err, "serve's server")
	ts := httptest.NewServer(srv)
	defer ts.Close()

	t.Run("FleetTable", func(t *testing.T) {
		dom := chromium(t, ctx, ts.URL+"/", "contract-year-fleet", 1400, 900)
		if i, j := strings.Index(dom, `id="fleet-yarrow"`), strings.Index(dom, `id="fleet-alder"`); i < 0 || j < i {
			t.Errorf("Yarrow Sound (9.5 points below its year's warranty) is not above Alder Moor (at %d and %d)", i, j)
		}
		for farm, want := range map[string]string{
			"yarrow": "87.50 % below warranty 97.0 % LDs 1,041.10 GBP 2026-04-01 to 2026-05-11",
			"alder":  "—",
		} {
			if got := cellText(t, rowOf(t, dom, "fleet-"+farm), "num year"); got != want {
				t.Errorf("%s's contract year in the fleet table: %q, want %q", farm, got, want)
			}
		}
	})

	t.Run("FarmPage", func(t *testing.T) {
		dom := chromium(t, ctx, ts.URL+"/farms/yarrow", "contract-year-farm", 1400, 1100)
		for id, want := range map[string]string{"year-contractual": "87.50 %", "year-warranty": "97.0 %", "year-ld": "1,041.10 GBP", "year-days": "20"} {
			m := regexp.MustCompile(`<span class="v" id="` + id + `">([^<]*)</span>`).FindStringSubmatch(dom)
			if m == nil || html.UnescapeString(m[1]) != want {
				t.Errorf("the farm page's %s: %v, want %q", id, m, want)
			}
		}
		if strings.Contains(dom, `id="year-bonus"`) {
			t.Error("the farm page shows a bonus; the year is below 98 %")
		}
		svg := html.UnescapeString(svgOf(t, dom, "contract-year-yarrow"))
		for what, n := range map[string][2]int{
			"month bars (April, May)": {strings.Count(svg, `<rect class="bar contract-month`), 2},
			"bars below the warranty": {strings.Count(svg, `<rect class="bar contract-month below" data-day="2026-05-01"`), 1},
			"warranty lines":          {strings.Count(svg, `class="threshold warranty"`), 1},
		} {
			if n[0] != n[1] {
				t.Errorf("the year's chart has %d %s, want %d", n[0], what, n[1])
			}
		}
		for _, want := range []string{`data-bars="2"`, ">warranty 97.0 %<", ">0 %<", ">Apr 2026<", ">Mar 2027<",
			"Contract year 2026-04-01 to 2027-03-31, Yarrow TSA", "2026-05-01 to 2026-05-31: contractual 75.00 % over 10 rolled-up days"} {
			if !strings.Contains(svg, want) {
				t.Errorf("the year's chart lacks %q", want)
			}
		}
	})
}

// cellText is the text of a row's <td class="class">, its tags dropped and
// its spaces collapsed.
func cellText(t *testing.T, row, class string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<td class="` + regexp.QuoteMeta(class) + `"[^>]*>(.*?)</td>`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("no <td class=%q> in %s", class, row)
	}
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], " "))), " ")
}
