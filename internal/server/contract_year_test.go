package server_test

import (
	"context"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// The contract year fixture: five UTC farms of two turbines at an hourly
// cadence (24 slots a turbine-day, 48 a farm-day), their days written as
// the rollup writes them (turbine_day with its category slots), the
// server's clock at 2026-06-10 12:00 UTC. Four contracts run their year
// from 1 April (2026-04-01 to 2027-03-31, 365 days) with LDs of 1,000 GBP a
// point below the warranty per turbine-year; their years to date:
//
//	d-kelp  warranty 97 %, LDs capped at 2,000. April 1-10 whole (480 of
//	        480 slots available), May 1-10 with K-2 in forced outage
//	        (240 of 480: 50 %). Year 720 / 960 = 75.00 %, 22 points below:
//	        22 x 1,000 x 40 turbine-days / 365 = 2,410.96, capped: 2,000.00.
//	c-moss  warranty 97 % to 30 April, then (applied effective 1 May) 96 %.
//	        April 1-10 whole (100 %: no LDs); May 1-10 with M-2 down 40
//	        slots (440 / 480 = 91.67 %): 96 - 91.6667 = 4.3333 points x
//	        1,000 x 20 / 365 = 237.44. Year 920 / 960 = 95.83 %, held to the
//	        latest period's 96 %: 0.17 points below.
//	a-wick  warranty 97 %, bonus 500 GBP a point above 98 % per
//	        turbine-year. April 1-10 and May 1-10 whole: 100 %, LDs 0.00,
//	        bonus 2 x 500 x 40 / 365 = 109.59.
//	e-dead  warranty 97 %. April 1 whole, April 2 without a reading at all
//	        (48 slots information unavailable, not accepted): 48 / 96 =
//	        50.00 %, LDs 47 x 1,000 x 4 / 365 = 515.07, but marked no data,
//	        not below: its figure measures the missing readings.
//	b-plain the default contract (no warranty): no contract year. June 1
//	        rolled up at 24 of 48 (50.00 % contractual for the month).
//
// Worst first: d-kelp (22 points below its year's warranty), c-moss
// (0.17), then by the month's contractual availability: b-plain (50 %),
// then the farms with no June day rolled up, in id order: a-wick, e-dead.
// By id (the order before) they would read a, b, c, d, e.
const yearFleet = `
shards: [{name: s1}]
farms:
  - id: a-wick
    name: Wick
    timezone: UTC
    cadence_seconds: 3600
    contract: {name: Wick TSA, warranty_pct: 97, year_start: "04-01", currency: GBP, ld_per_point: {amount: 1000, per: turbine},
               bonus_above_pct: 98, bonus_per_point: {amount: 500, per: turbine}}
    turbines: [{prefix: W-, from: 1, to: 2, shard: s1}]
  - id: b-plain
    name: Plain
    timezone: UTC
    cadence_seconds: 3600
    turbines: [{prefix: P-, from: 1, to: 2, shard: s1}]
  - id: c-moss
    name: Moss
    timezone: UTC
    cadence_seconds: 3600
    contract: {name: Moss TSA, warranty_pct: 97, year_start: "04-01", currency: GBP, ld_per_point: {amount: 1000, per: turbine}}
    turbines: [{prefix: M-, from: 1, to: 2, shard: s1}]
  - id: d-kelp
    name: Kelp
    timezone: UTC
    cadence_seconds: 3600
    contract: {name: Kelp TSA, warranty_pct: 97, year_start: "04-01", currency: GBP, ld_per_point: {amount: 1000, per: turbine}, ld_cap: 2000}
    turbines: [{prefix: K-, from: 1, to: 2, shard: s1}]
  - id: e-dead
    name: Dead Link
    timezone: UTC
    cadence_seconds: 3600
    contract: {name: Dead TSA, warranty_pct: 97, year_start: "04-01", currency: GBP, ld_per_point: {amount: 1000, per: turbine}}
    turbines: [{prefix: D-, from: 1, to: 2, shard: s1}]
`

var yearNow = time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)

func yearSetup(t *testing.T) statusEnv {
	t.Helper()
	env := testdb.New(t, yearFleet)
	amended := strings.Replace(yearFleet, "{name: Moss TSA, warranty_pct: 97,", "{name: Moss TSA amended, warranty_pct: 96,", 1)
	plan, err := fleet.Parse("amended", strings.NewReader(amended))
	testdb.Must(t, err, "parse the amended fleet")
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	_, err = env.Registry.ApplyWith(context.Background(), "amended", plan, fleet.ApplyOptions{EffectiveFrom: &from})
	testdb.Must(t, err, "apply Moss's amended contract from 1 May")
	// (turbine, first day, days, slots unavailable a day (forced outage), slots without a reading a day)
	for _, r := range []struct {
		turbine, farm, first string
		days, down, silent   int
	}{
		{"W-001", "a-wick", "2026-04-01", 10, 0, 0}, {"W-002", "a-wick", "2026-04-01", 10, 0, 0},
		{"W-001", "a-wick", "2026-05-01", 10, 0, 0}, {"W-002", "a-wick", "2026-05-01", 10, 0, 0},
		{"P-001", "b-plain", "2026-06-01", 1, 0, 0}, {"P-002", "b-plain", "2026-06-01", 1, 24, 0},
		{"M-001", "c-moss", "2026-04-01", 10, 0, 0}, {"M-002", "c-moss", "2026-04-01", 10, 0, 0},
		{"M-001", "c-moss", "2026-05-01", 10, 0, 0}, {"M-002", "c-moss", "2026-05-01", 10, 4, 0},
		{"K-001", "d-kelp", "2026-04-01", 10, 0, 0}, {"K-002", "d-kelp", "2026-04-01", 10, 0, 0},
		{"K-001", "d-kelp", "2026-05-01", 10, 0, 0}, {"K-002", "d-kelp", "2026-05-01", 10, 24, 0},
		{"D-001", "e-dead", "2026-04-01", 1, 0, 0}, {"D-002", "e-dead", "2026-04-01", 1, 0, 0},
		{"D-001", "e-dead", "2026-04-02", 1, 0, 24}, {"D-002", "e-dead", "2026-04-02", 1, 0, 24},
	} {
		// computed an hour after the day closed (its end + 1 h)
		testdb.Exec(t, env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
			last_received_at, computed_at, closed_at, category_slots)
			SELECT $1, d::date, $2, 's1', 24, 24 - $5::integer, 24 - $4::integer - $5::integer, 0, 0, d + interval '23 hours',
			       d + interval '1 day 2 hours', d + interval '1 day 1 hour',
			       ARRAY[24 - $4::integer - $5::integer, 0, 0, 0, 0, 0, 0, 0, 0, $4::integer, 0, 0, $5::integer]
			FROM generate_series($3::date::timestamptz, $3::date::timestamptz + make_interval(days => $6::integer - 1), interval '1 day') AS d`,
			r.turbine, r.farm, r.first, r.down, r.silent, r.days)
	}
	testdb.Exec(t, env.Control, `INSERT INTO shard_drain (shard_name, drained_through, shard_clock_at, marks_read) VALUES ('s1', $1, $1, 0)`, yearNow.Add(-5*time.Second))
	cfg := server.DefaultConfig()
	srv := server.New(env.Control, env.Shards, cfg)
	srv.Now = func() time.Time { return yearNow }
	return statusEnv{env: env, srv: srv, url: serve(t, srv, cfg)}
}

// text is an element's text, its tags dropped and its spaces collapsed.
func text(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(s, " "))), " ")
}

// TestFleetTableShowsTheContractYear: the fleet table's year to date per
// farm (yearFleet's numbers), worst first by how far the year is below
// its warranty, then by the month.
func TestFleetTableShowsTheContractYear(t *testing.T) {
	t.Parallel()
	e := yearSetup(t)
	code, page := get(t, e.url+"/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	var order []string
	for _, m := range regexp.MustCompile(`<tr id="fleet-([a-z-]+)"`).FindAllStringSubmatch(page, -1) {
		order = append(order, m[1])
	}
	if got, want := strings.Join(order, ","), "d-kelp,c-moss,b-plain,a-wick,e-dead"; got != want {
		t.Errorf("fleet order %s, want %s", got, want)
	}
	for farm, want := range map[string]string{
		"d-kelp":  "75.00 % below warranty 97.0 % LDs 2,000.00 GBP (capped) 2026-04-01 to 2026-06-10",
		"c-moss":  "95.83 % below warranty 96.0 %, the latest period's LDs 237.44 GBP 2026-04-01 to 2026-06-10",
		"a-wick":  "100.00 % warranty 97.0 % LDs 0.00 GBP bonus 109.59 GBP 2026-04-01 to 2026-06-10",
		"e-dead":  "50.00 % no data no reading at all: 2026-04-02 warranty 97.0 % LDs 515.07 GBP 2026-04-01 to 2026-06-10",
		"b-plain": "—",
	} {
		if got := text(cell(t, element(t, page, "tr", "fleet-"+farm), "num year")); got != want {
			t.Errorf("%s's contract year: %q, want %q", farm, got, want)
		}
	}
	// the month's own figure is still there: b-plain's June 1, 24 of 48,
	// below the page's default warranty
	if got := text(cell(t, element(t, page, "tr", "fleet-b-plain"), "num contractual")); got != "50.00 % below" {
		t.Errorf("b-plain's month: %q, want 50.00 %% below", got)
	}
}

// TestFarmPageChartsTheContractYear: the farm page's year (d-kelp: April
// 100 %, May 50 %, June a gap) and the tile's JSON.
func TestFarmPageChartsTheContractYear(t *testing.T) {
	t.Parallel()
	e := yearSetup(t)
	code, page := get(t, e.url+"/farms/d-kelp")
	if code != 200 {
		t.Fatalf("GET /farms/d-kelp: %d", code)
	}
	section := element(t, page, "section", "year-d-kelp")
	for id, want := range map[string]string{"year-contractual": "75.00 %", "year-warranty": "97.0 %", "year-ld": "2,000.00 GBP", "year-days": "20"} {
		if got := text(element(t, section, "span", id)); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	for _, want := range []string{"Contract year 2026-04-01 to 2027-03-31 · Kelp TSA", "LDs accrued (at the year's cap)", "below the warranty by 22.00 points so far"} {
		if !strings.Contains(text(section), want) {
			t.Errorf("the year's section lacks %q: %s", want, text(section))
		}
	}
	svg := element(t, section, "svg", "contract-year-d-kelp")
	// a slot per month: April's bar at 100 %, May's at 50 % (below), no
	// bar for June (no day rolled up) nor any later month
	for what, n := range map[string][2]int{
		"month bars":                  {strings.Count(svg, `<rect class="bar contract-month`), 2},
		"bars below the warranty":     {strings.Count(svg, `<rect class="bar contract-month below"`), 1},
		"warranty lines":              {strings.Count(svg, `class="threshold warranty"`), 1},
		"month ticks (Apr to Mar)":    {strings.Count(svg, `<text class="xtick"`), 13},
		"bars dated 2026-05-01 (May)": {strings.Count(svg, `class="bar contract-month below" data-day="2026-05-01"`), 1},
	} {
		if n[0] != n[1] {
			t.Errorf("the year's chart has %d %s, want %d", n[0], what, n[1])
		}
	}
	for _, want := range []string{">warranty 97.0 %<", ">0 %<", ">100 %<", "Contract year 2026-04-01 to 2027-03-31, Kelp TSA", "2026-05-01 to 2026-05-31: contractual 50.00 % over 10 rolled-up days"} {
		if !strings.Contains(html.UnescapeString(svg), want) {
			t.Errorf("the year's chart lacks %q", want)
		}
	}
	_, moss := get(t, e.url+"/farms/c-moss")
	if svg := html.UnescapeString(element(t, moss, "svg", "contract-year-c-moss")); !strings.Contains(svg, ">warranty 96.0 % (the latest period's)<") ||
		strings.Count(svg, `<rect class="bar contract-month below"`) != 1 {
		t.Errorf("c-moss's chart: want the latest period's 96 %% line and May (91.67 %%) below it: %s", svg)
	}
	_, plain := get(t, e.url+"/farms/b-plain")
	if strings.Contains(plain, `id="year-b-plain"`) || strings.Contains(plain, `id="contract-year-b-plain"`) {
		t.Error("b-plain, without a warranty, shows a contract year")
	}

	t.Run("TileJSON", func(t *testing.T) {
		var tile struct {
			ContractYear *struct {
				Year                       int
				FirstDay                   string      `json:"first_day"`
				LastDay                    string      `json:"last_day"`
				ToDate                     string      `json:"to_date"`
				Contract                   string      `json:"contract"`
				ContractualAvailabilityPct float64     `json:"contractual_availability_pct"`
				WarrantyPct                float64     `json:"warranty_pct"`
				WarrantyFrom               string      `json:"warranty_from"`
				BelowPoints                float64     `json:"below_points"`
				LD                         json.Number `json:"ld"`
				LDCapped                   bool        `json:"ld_capped"`
				Bonus                      *json.Number
				Currency                   string
				NoReading                  []string `json:"no_reading_days"`
				Months                     []struct {
					FirstDay                   string  `json:"first_day"`
					ContractualAvailabilityPct float64 `json:"contractual_availability_pct"`
					WarrantyPct                float64 `json:"warranty_pct"`
				}
			} `json:"contract_year"`
		}
		body := getJSON(t, e.url+"/api/v1/farms/d-kelp/tile", 200, &tile)
		y := tile.ContractYear
		if y == nil || y.Year != 2026 || y.FirstDay != "2026-04-01" || y.LastDay != "2027-03-31" || y.ToDate != "2026-06-10" || y.Contract != "Kelp TSA" ||
			y.ContractualAvailabilityPct != 75 || y.WarrantyPct != 97 || y.WarrantyFrom != "year" || y.BelowPoints != 22 ||
			y.LD.String() != "2000.00" || !y.LDCapped || y.Bonus != nil || y.Currency != "GBP" || len(y.NoReading) != 0 ||
			len(y.Months) != 2 || y.Months[0].FirstDay != "2026-04-01" || y.Months[0].ContractualAvailabilityPct != 100 ||
			y.Months[1].FirstDay != "2026-05-01" || y.Months[1].ContractualAvailabilityPct != 50 || y.Months[1].WarrantyPct != 97 {
			t.Errorf("d-kelp's tile: %s\nwant its year 2026-04-01..2027-03-31 to 2026-06-10: 75 %% of 97 %%, 22 points below, LDs 2000.00 GBP capped, April 100 %%, May 50 %%", body)
		}
		body = getJSON(t, e.url+"/api/v1/farms/c-moss/tile", 200, &tile)
		if y := tile.ContractYear; y == nil || y.WarrantyPct != 96 || y.WarrantyFrom != "latest period" || y.LD.String() != "237.44" || y.Contract != "Moss TSA, Moss TSA amended" {
			t.Errorf("c-moss's tile: %s\nwant the latest period's 96 %%, LDs 237.44", body)
		}
		body = getJSON(t, e.url+"/api/v1/farms/b-plain/tile", 200, &tile)
		if tile.ContractYear != nil || !strings.Contains(body, `"contract_year":null`) {
			t.Errorf("b-plain's tile: %s, want contract_year null (no warranty)", body)
		}
	})
}
