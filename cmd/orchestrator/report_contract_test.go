package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Two farms with the same readings and different settlement terms: pp
// settles per percentage point, mwh per MWh. UTC days, one reading an hour
// (a slot is one hour: 24 a turbine-day, 48 a farm-day), a flat power
// curve (10 m/s: 2,000 kW, so a slot's potential energy is 2 MWh). Both
// contracts' years start on 1 April; on 1 December each farm's contract
// changes (applied effective 2026-12-01T00:00Z).
const contractYearFleet = `
shards: [{name: s1}, {name: s2}]
models:
  - name: F2
    curve: [[3, 0], [4, 2000], [25, 2000]]
farms:
  - id: pp
    timezone: UTC
    cadence_seconds: 3600
    rules: {window: 1h}
    commissioned_at: 2026-03-01T00:00:00Z
    model: F2
    contract:
      name: PP 2026
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_point: {amount: 1000, per: turbine}
      ld_cap: 5000
    turbines: [{prefix: PP-, from: 1, to: 2, shard: s1}]
  - id: mwh
    timezone: UTC
    cadence_seconds: 3600
    rules: {window: 1h}
    commissioned_at: 2026-03-01T00:00:00Z
    model: F2
    contract:
      name: MW 2026
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_mwh: 40
      ld_cap: 12000
    turbines: [{prefix: MW-, from: 1, to: 2, shard: s2}]
`

// contractYearAmended is the same fleet with the contracts as amended
// from 1 December: a lower warranty, new rates, pp's bonus, mwh's lower cap.
var contractYearAmended = strings.NewReplacer(
	`      name: PP 2026
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_point: {amount: 1000, per: turbine}
      ld_cap: 5000`,
	`      name: PP 2026 amended
      warranty_pct: 96
      year_start: "04-01"
      currency: GBP
      ld_per_point: {amount: 1200, per: turbine}
      ld_cap: 5000
      bonus_above_pct: 98
      bonus_per_point: {amount: 500, per: turbine}`,
	`      name: MW 2026
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_mwh: 40
      ld_cap: 12000`,
	`      name: MW 2026 amended
      warranty_pct: 96
      year_start: "04-01"
      currency: GBP
      ld_per_mwh: 50
      ld_cap: 10000`).Replace(contractYearFleet)

// TestContractYearWorkedByHand: the contract year 2026 (2026-04-01 to
// 2027-03-31, 365 days) of both farms, through ingest, `work --until-idle`,
// `day accept` and `report contract`, every figure as worked here by hand.
//
// Readings: every hour of both turbines, available, 2,000 kW at 10 m/s,
// except turbine 2 unavailable (0 kW) 1-20 July (480 slots of forced
// outage), turbine 1 silent 00:00-10:00 on 3 October (10 slots without a
// reading: information unavailable, potential 0; the day is incomplete
// until accepted) and turbine 1 unavailable 5-6 January (48 slots).
// The default classes: forced outage and information unavailable count
// as unavailable, nothing is excluded.
//
// Period 1, 1 April - 30 November (244 days, 488 turbine-days), the
// contracts of 2026: counted 244 x 48 = 11,712 slots (= turbine-hours),
// available 11,712 - 480 - 10 = 11,222: 95.8163 %. Production-based:
// actual 11,222 x 2 = 22,444 MWh, lost 480 x 2 = 960 MWh (nothing lost
// without a reading): 22,444 / 23,404 = 95.8981 %. Potential of the counted
// time 11,702 x 2 = 23,404 MWh. Shortfall against 97 %: 0.97 - 11,222 /
// 11,712 = 1.1837 points; 0.97 x 11,712 - 11,222 = 138.64 turbine-hours;
// 0.0118374... x 23,404 = 277.043 MWh.
//
//	pp: 1.18374... points x 1,000 GBP x 488 turbine-days / 365 = 1,582.65.
//	mwh: 277.0432... MWh x 40 GBP = 11,081.73.
//
// Period 2, 1 December - 31 March (121 days, 242 turbine-days), amended:
// counted 5,808, available 5,760: 99.1736 % (production-based the same:
// 11,520 / 11,616), potential 11,616 MWh; above 96 %: no shortfall, no LDs.
//
//	pp's bonus above 98 %: (0.991735... - 0.98) x 100 = 1.17355 points x
//	500 GBP x 242 / 365 = 389.04.
//
// The year: 17,520 counted, 16,982 available: 96.9292 %; production-based
// 33,964 / 35,020 = 96.9846 %; shortfall 138.64 turbine-hours of 17,520 =
// 0.7913 points, 277.043 MWh.
//
//	pp: LDs 1,582.65 (under the cap of 5,000), bonus 389.04.
//	mwh: LDs 11,081.73, capped at 10,000.00: the cap of the contract
//	governing the year's last day (the amended one; 2026's was 12,000).
//
// Months: July 31 x 48 = 1,488 counted, 1,008 available: 67.7419 %,
// 29.2581 points, 0.97 x 1,488 - 1,008 = 435.36 turbine-hours, x 2 MWh =
// 870.720 MWh. October: 1,478 of 1,488: 99.3280 %, production-based 100 %
// (2,956 MWh potential, none lost). January: 1,440 of 1,488 = 96.7742 %,
// above the amended 96 %: no shortfall.
func TestContractYearWorkedByHand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, contractYearFleet)
	now := time.Date(2027, 4, 5, 0, 0, 0, 0, time.UTC)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	newMain := func() *Main { return &Main{Config: cfg, Now: func() time.Time { return now }} }
	run := func(args ...string) (string, error) {
		t.Helper()
		m := newMain()
		defer m.Close()
		cmd := m.Command()
		cmd.SetArgs(args)
		var out bytes.Buffer
		cmd.SetOut(&out)
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		err := cmd.ExecuteContext(cctx)
		return out.String(), err
	}

	amended := filepath.Join(t.TempDir(), "amended.yaml")
	testdb.Must(t, os.WriteFile(amended, []byte(contractYearAmended), 0o644), "write the amended fleet file")
	captureStdout(t, func() {
		_, err := run("fleet", "apply", amended, "--effective-from", "2026-12-01T00:00:00Z")
		testdb.Must(t, err, "fleet apply the amended contracts")
	})

	var lines strings.Builder
	first := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for day := first; day.Before(first.AddDate(1, 0, 0)); day = day.AddDate(0, 0, 1) {
		for h := 0; h < 24; h++ {
			at := day.Add(time.Duration(h)*time.Hour + 5*time.Second)
			for _, farm := range []string{"PP", "MW"} {
				for n := 1; n <= 2; n++ {
					if n == 1 && day.Equal(time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)) && h < 10 {
						continue
					}
					down := (n == 2 && day.Month() == time.July && day.Day() <= 20) ||
						(n == 1 && day.Year() == 2027 && day.Month() == time.January && (day.Day() == 5 || day.Day() == 6))
					power := 2000
					if down {
						power = 0
					}
					fmt.Fprintf(&lines, `{"turbine_id":"%s-%03d","recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%d,"wind_ms":10}`+"\n",
						farm, n, at.Format(time.RFC3339), at.Add(2*time.Second).Format(time.RFC3339), !down, power)
				}
			}
		}
	}
	m := newMain()
	in, err := m.Ingestor(ctx)
	testdb.Must(t, err, "ingestor")
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(lines.String()))
	testdb.Must(t, err, "decoder")
	sum, err := in.Ingest(ctx, "test", dec)
	testdb.Must(t, err, "ingest")
	in.Close()
	m.Close()
	if want := int64(2 * (365*48 - 10)); sum.Accepted != want {
		t.Fatalf("ingest accepted %d, want %d", sum.Accepted, want)
	}
	// Nothing rolled up yet: no period, no figures; the year is provisional
	// and why says for what, nothing else.
	out, err := run("report", "contract", "--farm", "pp", "--year", "2026", "--format", "json")
	testdb.Must(t, err, "report contract before the rollups")
	var y report.ContractYear
	testdb.Must(t, json.Unmarshal([]byte(out), &y), "json")
	if len(y.Periods) != 0 || y.Total.Status != report.StatusProvisional || y.Total.Why != "no rollup: 2026-04-01..2027-03-31" || y.Total.ContractualAvailabilityPct != nil {
		t.Fatalf("before the rollups: %d periods, year %s (%q), contractual %v; want none, provisional (no rollup: 2026-04-01..2027-03-31), no figure",
			len(y.Periods), y.Total.Status, y.Total.Why, y.Total.ContractualAvailabilityPct)
	}
	captureStdout(t, func() {
		_, err := run("work", "--until-idle")
		testdb.Must(t, err, "work --until-idle")
	})

	// Before the acceptance: 3 October holds October and the year back.
	out, err = run("report", "contract", "--farm", "pp", "--year", "2026", "--format", "json")
	testdb.Must(t, err, "report contract --format json")
	y = report.ContractYear{}
	testdb.Must(t, json.Unmarshal([]byte(out), &y), "json")
	const settledPP = "settled in 2 periods, each by its contract: PP 2026 2026-04-01..2026-11-30, PP 2026 amended 2026-12-01..2027-03-31"
	if len(y.Months) != 12 || y.Months[6].Status != report.StatusIncomplete || y.Months[6].Why != "information unavailable: 2026-10-03" ||
		y.Total.Status != report.StatusIncomplete || y.Total.Why != "information unavailable: 2026-10-03; "+settledPP || len(y.Accepted) != 0 {
		t.Fatalf("before acceptance: %d months, October %s (%s), year %s (%s), %d accepted; want 12 months, October and the year incomplete for 2026-10-03",
			len(y.Months), y.Months[6].Status, y.Months[6].Why, y.Total.Status, y.Total.Why, len(y.Accepted))
	}
	for _, farm := range []string{"pp", "mwh"} {
		captureStdout(t, func() {
			_, err := run("day", "accept", "--farm", farm, "--day", "2026-10-03", "--note", "logger swapped; the hours are lost")
			testdb.Must(t, err, "day accept %s", farm)
		})
	}

	const terms1 = "year from 1 April; warranty 97.0 %; "
	want := map[string][]string{
		"pp": {
			"pp,period,2026-04-01,2026-11-30,PP 2026," + terms1 + "LDs 1000.00 GBP per point below the warranty per turbine-year; capped at 5000.00 GBP a year," +
				"GBP,244,488,97.0,95.8163,95.8981,11712.00,1.1837,138.64,23404.000,277.043,1582.65,,final,",
			"pp,period,2026-12-01,2027-03-31,PP 2026 amended,year from 1 April; warranty 96.0 %; LDs 1200.00 GBP per point below the warranty per turbine-year; " +
				"capped at 5000.00 GBP a year; bonus 500.00 GBP per point above 98.0 % per turbine-year," +
				"GBP,121,242,96.0,99.1736,99.1736,5808.00,0.0000,0.00,11616.000,0.000,0.00,389.04,final,",
			"pp,month,2026-07-01,2026-07-31,PP 2026,,GBP,31,62,97.0,67.7419,67.7419,1488.00,29.2581,435.36,2976.000,870.720,,,final,",
			"pp,month,2026-10-01,2026-10-31,PP 2026,,GBP,31,62,97.0,99.3280,100.0000,1488.00,0.0000,0.00,2956.000,0.000,,,final,",
			"pp,month,2027-01-01,2027-01-31,PP 2026 amended,,GBP,31,62,96.0,96.7742,96.7742,1488.00,0.0000,0.00,2976.000,0.000,,,final,",
			`pp,year,2026-04-01,2027-03-31,"PP 2026, PP 2026 amended",,GBP,365,730,,96.9292,96.9846,17520.00,0.7913,138.64,35020.000,277.043,1582.65,389.04,final,"` + settledPP + `"`,
		},
		"mwh": {
			"mwh,period,2026-04-01,2026-11-30,MW 2026," + terms1 + "LDs 40.00 GBP per MWh of the shortfall; capped at 12000.00 GBP a year," +
				"GBP,244,488,97.0,95.8163,95.8981,11712.00,1.1837,138.64,23404.000,277.043,11081.73,,final,",
			"mwh,period,2026-12-01,2027-03-31,MW 2026 amended,year from 1 April; warranty 96.0 %; LDs 50.00 GBP per MWh of the shortfall; capped at 10000.00 GBP a year," +
				"GBP,121,242,96.0,99.1736,99.1736,5808.00,0.0000,0.00,11616.000,0.000,0.00,,final,",
			`mwh,year,2026-04-01,2027-03-31,"MW 2026, MW 2026 amended",,GBP,365,730,,96.9292,96.9846,17520.00,0.7913,138.64,35020.000,277.043,10000.00,,final,` +
				`"settled in 2 periods, each by its contract: MW 2026 2026-04-01..2026-11-30, MW 2026 amended 2026-12-01..2027-03-31; LDs capped at the year's cap (10000.00 GBP)"`,
		},
	}
	for _, farm := range []string{"pp", "mwh"} {
		cli, err := run("report", "contract", "--farm", farm, "--year", "2026")
		testdb.Must(t, err, "report contract %s", farm)
		psqlCmd := exec.CommandContext(ctx, psqlBinary(t), "-X", "-w", "--csv",
			"-v", "farm="+farm, "-v", "year=2026", "-v", "now="+now.Format(time.RFC3339),
			"-f", filepath.Join("..", "..", "sql", "reports", "contract_year.sql"), "-d", env.ControlDSN)
		var psqlOut, psqlErr bytes.Buffer
		psqlCmd.Stdout, psqlCmd.Stderr = &psqlOut, &psqlErr
		if err := psqlCmd.Run(); err != nil {
			t.Fatalf("psql: %v\n%s", err, psqlErr.String())
		}
		if cli != psqlOut.String() {
			t.Fatalf("%s: orchestrator report contract:\n%s\npsql --csv:\n%s", farm, cli, psqlOut.String())
		}
		rows := strings.Split(strings.TrimSuffix(cli, "\n"), "\n")
		// header, 2 periods, 12 months, the year, 1 accepted day
		if len(rows) != 17 || rows[0] != strings.Join(report.YearColumns, ",") {
			t.Fatalf("%s: %d lines, header %q; want 17 and the columns", farm, len(rows), rows[0])
		}
		for _, w := range want[farm] {
			found := false
			for _, r := range rows {
				found = found || r == w
			}
			if !found {
				t.Errorf("%s: no row\n%s\nin\n%s", farm, w, cli)
			}
		}
		rec, err := csv.NewReader(strings.NewReader(rows[16])).Read()
		testdb.Must(t, err, "accepted row")
		if rec[1] != "accepted" || rec[2] != "2026-10-03" || rec[19] != "final" ||
			!strings.HasPrefix(rec[20], "accepted with 10 of 48 slots without a reading by ") || !strings.HasSuffix(rec[20], ": logger swapped; the hours are lost") {
			t.Errorf("%s: last row %q, want 3 October accepted with its note", farm, rows[16])
		}
	}

	md, err := run("report", "contract", "--farm", "mwh", "--year", "2026", "--format", "md")
	testdb.Must(t, err, "report contract --format md")
	for _, s := range []string{
		"# Contract year 2026 of mwh (2026-04-01 to 2027-03-31): final",
		"- **MW 2026 amended**, 2026-12-01 to 2027-03-31: year from 1 April; warranty 96.0 %; LDs 50.00 GBP per MWh of the shortfall; capped at 10000.00 GBP a year",
		"| **year to date** | 2026-04-01 | 2027-03-31 | MW 2026, MW 2026 amended |  | 96.9292 % | 96.9846 % | 0.7913 | 138.64 | 277.043 | 10000.00 |  | GBP | final |",
		"- 2026-10-03: accepted with 10 of 48 slots without a reading by ",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}

	// --all writes the farms with a contract; a mistyped flag and a bad year
	// are refused (exit 2).
	dir := t.TempDir()
	got, err := run("report", "contract", "--all", "--year", "2026", "--out", dir)
	testdb.Must(t, err, "report contract --all")
	if want := fmt.Sprintf("%s: final (0 months held back)\n%s: final (0 months held back)\n",
		filepath.Join(dir, "mwh_contract_2026.csv"), filepath.Join(dir, "pp_contract_2026.csv")); got != want {
		t.Errorf("--all printed %q, want %q", got, want)
	}
	if _, err := run("report", "contract", "--farm", "pp", "--yaer", "2026"); exitCode(err) != 2 || !strings.Contains(err.Error(), "unknown flag: --yaer") {
		t.Errorf("--yaer 2026: %v (exit %d), want exit 2 naming the flag", err, exitCode(err))
	}
	if _, err := run("report", "contract", "--farm", "pp", "--year", "26"); exitCode(err) != 2 || !strings.Contains(err.Error(), `year "26": want the contract year as YYYY`) {
		t.Errorf("--year 26: %v (exit %d), want exit 2 naming the year", err, exitCode(err))
	}
}
