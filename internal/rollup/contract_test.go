package rollup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Two farms of one turbine each, 10-minute cadence (144 slots in a UTC
// day), the same readings: "plain" has no contract (the default), "iec"
// one that excludes wind below cut-in and maps two controller codes.
const contractFleet = `
shards: [{name: s1}]
models:
  - name: T3
    curve: [[3, 0], [5, 200], [10, 1000], [12, 1500], [25, 1500]]
farms:
  - id: plain
    timezone: UTC
    cadence_seconds: 600
    commissioned_at: 2026-07-01T00:00:00Z
    turbines: [{id: P-1, shard: s1}]
  - id: iec
    timezone: UTC
    cadence_seconds: 600
    commissioned_at: 2026-07-01T00:00:00Z
    model: T3
    contract:
      name: TSA 2026
      warranty_pct: 97
      cut_in_ms: 3
      cut_out_ms: 25
      states: {GRID: requested_shutdown, SVC: scheduled_maintenance}
      available: [full_performance, partial_performance, ready_standby, technical_standby,
                  requested_shutdown, out_of_electrical_spec]
      excluded: [out_of_environmental_spec]
    turbines: [{id: C-1, shard: s1}]
`

// contractDay is the readings of both turbines: slot k of 2026-08-01
// (00:00Z + k × 10 min), what it says.
func contractDay(b *strings.Builder, id string) {
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	line := func(k int, available bool, wind, power float64, state string) {
		at := day.Add(time.Duration(k) * 10 * time.Minute)
		st := ""
		if state != "" {
			st = fmt.Sprintf(`,"state":%q`, state)
		}
		fmt.Fprintf(b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%g,"wind_ms":%g%s}`+"\n",
			id, at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339), available, power, wind, st)
	}
	for k := 0; k < 144; k++ {
		switch {
		case k < 96: // available in 8 m/s, producing what the curve says (680 kW)
			line(k, true, 8, 680, "")
		case k < 116: // available in 2 m/s: below cut-in
			line(k, true, 2, 0, "")
		case k < 126: // unavailable in 2 m/s: below cut-in too
			line(k, false, 2, 0, "")
		case k < 131: // unavailable in 9 m/s: a fault, stopped
			line(k, false, 9, 0, "")
		case k < 135: // unavailable, the controller says grid curtailment
			line(k, false, 9, 0, "GRID")
		case k < 137: // available, the controller says scheduled service
			line(k, true, 9, 0, "SVC")
		case k == 137: // a second reading in slot 136, unavailable, no code:
			// the slot is one slot, scheduled maintenance (a mapped code
			// decides its reading alone, and maintenance outranks a fault)
			at := day.Add(136*10*time.Minute + 30*time.Second)
			fmt.Fprintf(b, `{"turbine_id":%q,"recorded_at":%q,"available":false,"power_kw":0,"wind_ms":9}`+"\n", id, at.Format(time.RFC3339))
		}
		// slots 137..143: no reading (7 slots)
	}
}

type contractRow struct {
	Contract                         string
	Expected, Available              int64
	Slots                            string
	CAvailable, CUnavailable, CExcl  int64
	Contractual, TimeBased, InfoMiss string
}

func (b *bundle) contractDay(t *testing.T, farm string) contractRow {
	t.Helper()
	var r contractRow
	err := b.Env.Control.QueryRow(context.Background(), `
		SELECT contract, expected, available, category_slots::text, contract_available, contract_unavailable, contract_excluded,
		       to_char(100 * contractual_availability, 'FM990.0000'), to_char(100 * time_based_availability, 'FM990.0000'),
		       to_char(100 * information_unavailable, 'FM990.0000')
		FROM farm_day_contract WHERE farm_id = $1 AND day = '2026-08-01'`, farm).
		Scan(&r.Contract, &r.Expected, &r.Available, &r.Slots, &r.CAvailable, &r.CUnavailable, &r.CExcl, &r.Contractual, &r.TimeBased, &r.InfoMiss)
	testdb.Must(t, err, "farm_day_contract %s", farm)
	return r
}

// TestAContractSortsADaysSlotsIntoItsCategories: one day of 144 slots,
// counted by hand, under the default contract and under one that excludes
// wind below cut-in and maps controller codes.
func TestAContractSortsADaysSlotsIntoItsCategories(t *testing.T) {
	t.Parallel()
	b := setup(t, contractFleet, pipelinetest.Options{})
	var text strings.Builder
	contractDay(&text, "P-1")
	contractDay(&text, "C-1")
	b.IngestText(t, text.String())
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for _, farm := range []string{"plain", "iec"} {
		_, err := b.Computer.Recompute(context.Background(), rollup.Request{FarmID: farm, Day: day, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
		testdb.Must(t, err, "recompute %s", farm)
	}

	// No contract: a slot is full performance when its readings say
	// available (96 + 20 + slot 135 = 117, today's available), forced
	// outage when one says unavailable (10 + 5 + 4 + slot 136 = 20),
	// information unavailable without a reading (7); codes and wind say
	// nothing. Contractual = time-based = 117 / 144 = 81.25 %.
	plain := b.contractDay(t, "plain")
	want := contractRow{Contract: "default", Expected: 144, Available: 117, Slots: "{117,0,0,0,0,0,0,0,0,20,0,0,7}",
		CAvailable: 117, CUnavailable: 27, CExcl: 0, Contractual: "81.2500", TimeBased: "81.2500", InfoMiss: "4.8611"}
	if plain != want {
		t.Fatalf("default contract:\n got %+v\nwant %+v", plain, want)
	}

	// The contract: 96 full performance; below cut-in 20 available and 10
	// unavailable = 30 out of environmental specification (it outranks
	// both), excluded; 5 forced outage; 4 GRID = requested shutdown
	// (available); slot 135 and 136 SVC = scheduled maintenance (2, the
	// second reading of 136 does not change it); 7 information
	// unavailable. Available 96 + 4 = 100, unavailable 5 + 2 + 7 = 14,
	// excluded 30: contractual 100 / 114 = 87.7193 %; time-based stays
	// today's 117 / 144.
	iec := b.contractDay(t, "iec")
	wantIEC := contractRow{Contract: "TSA 2026", Expected: 144, Available: 117, Slots: "{96,0,0,0,30,4,0,2,0,5,0,0,7}",
		CAvailable: 100, CUnavailable: 14, CExcl: 30, Contractual: "87.7193", TimeBased: "81.2500", InfoMiss: "4.8611"}
	if iec != wantIEC {
		t.Fatalf("contract TSA 2026:\n got %+v\nwant %+v", iec, wantIEC)
	}

	// Energy (Wh = kW × 600 s / 3.6, rounded per window). T3's curve at 8
	// m/s is 200 + 800 × 3/5 = 680 kW, at 9 m/s 840 kW, at 2 m/s 0 (below
	// its first point). Full performance: 96 slots at 680 kW produced what
	// the curve gives, 113,333 Wh each. The stopped turbine loses its curve
	// over the day's winds: forced outage 5 × 840 kW × 600 s = 700,000 Wh,
	// requested shutdown 4 × 140,000, scheduled maintenance 2 × 140,000 (the
	// slot of two readings at their mean). Lost in the contract's
	// unavailable categories: 700,000 + 280,000 = 980,000 Wh;
	// production-based availability 10,879,968 / (10,879,968 + 980,000) =
	// 91.7369 %.
	e := b.energyDay(t, "iec")
	wantE := energyRow{Actual: "{10879968,0,0,0,0,0,0,0,0,0,0,0,0}", Potential: "{10879968,0,0,0,0,560000,0,280000,0,700000,0,0,0}",
		Lost: "{0,0,0,0,0,560000,0,280000,0,700000,0,0,0}", ActualWh: 10879968, LostWh: 980000, Production: "91.7369"}
	if e != wantE {
		t.Fatalf("energy under TSA 2026:\n got %+v\nwant %+v", e, wantE)
	}
	// The monthly report speaks it: the day and the month (one day
	// rolled up) with the contract's figures in percent and MWh.
	m, err := report.MonthlyAt(context.Background(), b.Env.Control, "iec", "2026-08", b.Now())
	testdb.Must(t, err, "report")
	for _, d := range []report.Day{m.Days[0], m.Total} {
		got := fmt.Sprintf("%s %v %v %v %v %v %v %s", d.Contract, *d.WarrantyPct, *d.ContractualAvailabilityPct, *d.TimeBasedAvailabilityPct,
			*d.ProductionBasedAvailabilityPct, *d.InformationUnavailablePct, *d.LostMWh, d.LostMWhByCategory)
		if want := "TSA 2026 97 87.7193 81.25 91.7369 4.8611 0.98 requested_shutdown 0.560; scheduled_maintenance 0.280; forced_outage 0.700"; got != want {
			t.Fatalf("report %s: %s\nwant %s", d.Day, got, want)
		}
	}
	if d := m.Days[1]; d.ContractualAvailabilityPct != nil || d.Contract != "" {
		t.Fatalf("report %s (not rolled up): contract %q, contractual %v; want none", d.Day, d.Contract, d.ContractualAvailabilityPct)
	}

	// No model: no energy (power and wind are the model's to interpret; the
	// farm's windows are computed from their counts only), no
	// production-based figure.
	var actual, potential, production string
	err = b.Env.Control.QueryRow(context.Background(), `SELECT coalesce(category_actual_wh::text, 'none'), coalesce(category_potential_wh::text, 'none'),
		coalesce(production_based_availability::text, 'none') FROM farm_day_contract WHERE farm_id = 'plain' AND day = '2026-08-01'`).Scan(&actual, &potential, &production)
	testdb.Must(t, err, "plain energy")
	if actual != "none" || potential != "none" || production != "none" {
		t.Fatalf("plain (no model): actual %s, potential %s, production-based %s; want none, none, none", actual, potential, production)
	}
}

type energyRow struct {
	Actual, Potential, Lost string
	ActualWh, LostWh        int64
	Production              string
}

func (b *bundle) energyDay(t *testing.T, farm string) energyRow {
	t.Helper()
	var r energyRow
	err := b.Env.Control.QueryRow(context.Background(), `
		SELECT category_actual_wh::text, category_potential_wh::text, category_lost_wh::text, actual_wh, lost_wh,
		       to_char(100 * production_based_availability, 'FM990.0000')
		FROM farm_day_contract WHERE farm_id = $1 AND day = '2026-08-01'`, farm).
		Scan(&r.Actual, &r.Potential, &r.Lost, &r.ActualWh, &r.LostWh, &r.Production)
	testdb.Must(t, err, "farm_day_contract energy %s", farm)
	return r
}

// TestAWindowOfTwoOrThreeCategoriesSplitsItsEnergy: a one-minute window of
// 30 slots at 2 s holding two categories has its energy split between them
// from the window's sums; one holding three is recounted slot by slot. Both
// give what each slot's reading says, rounded per window.
func TestAWindowOfTwoOrThreeCategoriesSplitsItsEnergy(t *testing.T) {
	t.Parallel()
	b := setup(t, `
shards: [{name: s1}]
models: [{name: T3, curve: [[3, 0], [5, 200], [10, 1000], [12, 1500], [25, 1500]]}]
farms:
  - id: mixed
    timezone: UTC
    commissioned_at: 2026-07-01T00:00:00Z
    model: T3
    contract: {cut_in_ms: 3}
    turbines: [{id: M-1, shard: s1}]
`, pipelinetest.Options{})
	var text strings.Builder
	t0 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	line := func(k int, available bool, power, wind float64) {
		at := t0.Add(time.Duration(k) * 2 * time.Second)
		fmt.Fprintf(&text, `{"turbine_id":"M-1","recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%g,"wind_ms":%g}`+"\n",
			at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339), available, power, wind)
	}
	for k := 0; k < 60; k++ {
		switch {
		case k < 20 || (k >= 30 && k < 40): // producing 100 kW in 8 m/s (curve 680 kW)
			line(k, true, 100, 8)
		case k < 30 || (k >= 40 && k < 50): // stopped in 9 m/s (curve 840 kW)
			line(k, false, 0, 9)
		default: // second minute's last 10: unavailable in 2 m/s, below cut-in
			line(k, false, 0, 2)
		}
	}
	b.IngestText(t, text.String())
	_, err := b.Computer.Recompute(context.Background(), rollup.Request{FarmID: "mixed", Day: t0, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
	testdb.Must(t, err, "recompute")
	got := map[string]string{}
	rows, err := b.Env.Shards.Pool("s1").Query(context.Background(), `SELECT to_char(window_start, 'HH24:MI'), format('%s %s %s', category_slots, category_actual_wh, category_potential_wh)
		FROM turbine_window WHERE turbine_id = 'M-1' AND window_start < '2026-08-01 00:02+00' ORDER BY window_start`)
	testdb.Must(t, err, "windows")
	for rows.Next() {
		var w, v string
		testdb.Must(t, rows.Scan(&w, &v), "scan")
		got[w] = v
	}
	testdb.Must(t, rows.Err(), "windows")
	// Wh a slot = kW × 2 s / 3.6: 100 kW 55.56, curve 680 kW 377.78, 840 kW
	// 466.67. 00:00: 20 producing (actual 1,111, potential 7,556), 10
	// stopped (potential 4,667). 00:01: 10 producing (556, 3,778), 10
	// stopped (4,667), 10 below cut-in (out of environmental spec, 0).
	want := map[string]string{
		"00:00": "{20,0,0,0,0,0,0,0,0,10,0,0,0} {1111,0,0,0,0,0,0,0,0,0,0,0,0} {7556,0,0,0,0,0,0,0,0,4667,0,0,0}",
		"00:01": "{10,0,0,0,10,0,0,0,0,10,0,0,0} {556,0,0,0,0,0,0,0,0,0,0,0,0} {3778,0,0,0,0,0,0,0,0,4667,0,0,0}",
	}
	for w, v := range want {
		if got[w] != v {
			t.Errorf("window %s: slots, actual, potential = %s; want %s", w, got[w], v)
		}
	}
}
