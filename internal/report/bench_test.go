package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkContractYear: what a contract year costs to read. A farm of 300
// turbines (Ardnave's size) with a contract (year from 1 April, LDs per
// point per turbine, a cap, a bonus) and a whole contract year of
// turbine_day rows (365 days, 109,500 rows, categories and energy), read
// three ways beside its floor in the same run:
//   - farm_contract_year: the figures (what the pages read per farm);
//   - report_contract_year: the report (the figures, each day of the year
//     judged by farm_day_status, the accepted days);
//   - orchestrator report contract's CSV (ContractYearAt and WriteYearCSV).
//
// The floor is the bare sums the figures cannot do without: every row of
// the year, its counts and its 39 category sums per farm-day
// (farm_day_contract over the year's days). Each figure is the best of 5.
// Run: go test -run '^$' -bench BenchmarkContractYear -benchtime 1x ./internal/report
func BenchmarkContractYear(b *testing.B) {
	ctx := context.Background()
	const turbines = 300
	env := testdb.New(b, `
shards: [{name: s1}]
farms:
  - id: big
    timezone: UTC
    contract:
      name: TSA
      warranty_pct: 97
      year_start: "04-01"
      currency: GBP
      ld_per_point: {amount: 4500, per: turbine}
      ld_cap: 2000000
      bonus_above_pct: 98.5
      bonus_per_point: {amount: 1500, per: turbine}
    turbines: [{prefix: B-, from: 1, to: `+fmt.Sprint(turbines)+`, shard: s1}]
`)
	// A day of 43,200 slots a turbine: 42,000 full performance, 500 forced
	// outage, 500 out of environmental specification, 200 without a reading.
	testdb.Exec(b, env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
			computed_at, closed_at, category_slots, category_actual_wh, category_potential_wh)
		SELECT t.id, d::date, 'big', 's1', 43200, 43000, 42500, 0, 0, '2027-04-02', '2027-04-02',
		       ARRAY[42000,0,0,0,500,0,0,0,0,500,0,0,200],
		       ARRAY[400000000,0,0,0,0,0,0,0,0,0,0,0,0]::bigint[],
		       ARRAY[410000000,0,0,0,1000,0,0,0,0,5000000,0,0,0]::bigint[]
		FROM turbine t CROSS JOIN generate_series('2026-04-01'::date, '2027-03-31'::date, interval '1 day') AS d
		WHERE t.farm_id = 'big'`)
	testdb.Exec(b, env.Control, `VACUUM (ANALYZE) turbine_day`)
	now := time.Date(2027, 4, 5, 0, 0, 0, 0, time.UTC)
	best := func(f func()) time.Duration {
		var m time.Duration
		for i := 0; i < 5; i++ {
			start := time.Now()
			f()
			if d := time.Since(start); i == 0 || d < m {
				m = d
			}
		}
		return m
	}
	run := func(sql string, args ...any) func() {
		return func() {
			rows, err := env.Control.Query(ctx, sql, args...)
			testdb.Must(b, err, "%s", sql)
			for rows.Next() {
			}
			testdb.Must(b, rows.Err(), "%s", sql)
		}
	}
	// Available: full performance and out of environmental specification
	// (available by default), 42,500 of 43,200 slots: 98.3796 %.
	if got := testdb.Text(b, env.Control, `SELECT round(100 * contractual_availability, 4)::text FROM farm_contract_year('big', 2026) WHERE scope = 'year'`); got != "98.3796" {
		b.Fatalf("the year's contractual availability %s, want 98.3796", got)
	}
	for i := 0; i < b.N; i++ {
		floor := best(run(`SELECT * FROM farm_day_contract WHERE farm_id = 'big' AND day BETWEEN '2026-04-01' AND '2027-03-31'`))
		figures := best(run(`SELECT * FROM farm_contract_year('big', 2026)`))
		rep := best(run(`SELECT * FROM report_contract_year('big', '2026', $1)`, now))
		cli := best(func() {
			y, err := report.ContractYearAt(ctx, env.Control, "big", "2026", now)
			testdb.Must(b, err, "report")
			testdb.Must(b, report.WriteYearCSV(&strings.Builder{}, y), "csv")
		})
		msg := fmt.Sprintf("a contract year of %d turbines (%d turbine-days): farm_contract_year %.0f ms, report_contract_year %.0f ms, the CLI's CSV %.0f ms, "+
			"against the floor, farm_day_contract over the year, %.0f ms: %.2f×, %.2f×, %.2f×",
			turbines, turbines*365, ms(figures), ms(rep), ms(cli), ms(floor),
			float64(figures)/float64(floor), float64(rep)/float64(floor), float64(cli)/float64(floor))
		fmt.Println(msg)
		b.Log(msg)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
