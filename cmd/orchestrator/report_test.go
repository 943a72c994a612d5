package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Two farms on one shard: north (two turbines, one reading an hour, 1-hour
// windows, Europe/London) and south, which sends nothing.
const reportFleet = `
shards: [{name: s1}]
farms:
  - id: north
    timezone: Europe/London
    cadence_seconds: 3600
    rules: {window: 1h}
    turbines: [{prefix: N-, from: 1, to: 2, shard: s1}]
  - id: south
    timezone: Europe/London
    cadence_seconds: 3600
    turbines: [{prefix: S-, from: 1, to: 1, shard: s1}]
`

// psqlBinary finds psql the way the embedded cluster finds its server
// binaries (internal/pgserver), else on the PATH.
func psqlBinary(t *testing.T) string {
	t.Helper()
	if dir, err := pgserver.FindBinDir(os.Getenv("PG_BINDIR")); err == nil {
		if p := filepath.Join(dir, "psql"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("psql")
	if err != nil {
		t.Fatal("psql not found (PG_BINDIR, pg_config --bindir, /usr/lib/postgresql/*/bin, PATH): install the PostgreSQL client")
	}
	return p
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// TestReportMonthlyMatchesPsql: `orchestrator report monthly` and psql
// running sql/reports/monthly_availability.sql give the same CSV, byte for
// byte. North's August: every hour of both turbines to the 29th but the
// 10th and the 15th (N-001 only: rolled up 1 of 2 turbines, whose rate is
// then N-001's alone), nothing on the 30th and 31st (no rollup); N-002
// unavailable before 06:00. `work --until-idle` on 2 September rolls up
// what arrived.
func TestReportMonthlyMatchesPsql(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, reportFleet)
	now := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	newMain := func() *Main { return &Main{Config: cfg, Now: func() time.Time { return now }} }

	london, err := time.LoadLocation("Europe/London")
	testdb.Must(t, err, "zone")
	var lines strings.Builder
	for d := 1; d <= 29; d++ {
		start := time.Date(2026, 8, d, 0, 0, 0, 0, london)
		for h := 0; h < 24; h++ {
			at := start.Add(time.Duration(h)*time.Hour + 5*time.Second)
			for _, id := range []string{"N-001", "N-002"} {
				if id == "N-002" && (d == 10 || d == 15) {
					continue
				}
				fmt.Fprintf(&lines, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":1,"wind_ms":5}`+"\n",
					id, at.UTC().Format(time.RFC3339), at.Add(2*time.Second).UTC().Format(time.RFC3339), !(id == "N-002" && h < 6))
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
	if sum.Accepted != 27*48+2*24 {
		t.Fatalf("ingest accepted %d, want %d", sum.Accepted, 27*48+2*24)
	}

	run := func(args ...string) (string, error) {
		t.Helper()
		m := newMain()
		defer m.Close()
		cmd := m.Command()
		cmd.SetArgs(args)
		var out bytes.Buffer
		cmd.SetOut(&out)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		err := cmd.ExecuteContext(cctx)
		return out.String(), err
	}
	captureStdout(t, func() {
		_, err := run("work", "--until-idle")
		testdb.Must(t, err, "work --until-idle")
	})

	cli, err := run("report", "monthly", "--farm", "north", "--month", "2026-08")
	testdb.Must(t, err, "report monthly")
	psqlCmd := exec.CommandContext(ctx, psqlBinary(t), "-X", "-w", "--csv",
		"-v", "farm=north", "-v", "month=2026-08", "-v", "now="+now.Format(time.RFC3339),
		"-f", filepath.Join("..", "..", "sql", "reports", "monthly_availability.sql"), "-d", env.ControlDSN)
	var psqlOut, psqlErr bytes.Buffer
	psqlCmd.Stdout, psqlCmd.Stderr = &psqlOut, &psqlErr
	if err := psqlCmd.Run(); err != nil {
		t.Fatalf("psql: %v\n%s", err, psqlErr.String())
	}
	if cli != psqlOut.String() {
		t.Fatalf("orchestrator report monthly:\n%s\npsql --csv:\n%s", cli, psqlOut.String())
	}
	rows := strings.Split(strings.TrimSuffix(cli, "\n"), "\n")
	wantRows := map[int]string{
		0:  strings.Join(report.Columns, ","),
		1:  "north,2026-08-01,48,48,42,0.875000,1.000000,2,2,turbine_day,final,2026-09-02 00:00:00,2026-09-02 00:00:00,false,final,,default,,87.5000,87.5000,,0.0000,,",
		10: "north,2026-08-10,24,24,24,1.000000,1.000000,1,2,turbine_day,final,2026-09-02 00:00:00,2026-09-02 00:00:00,false,provisional,turbines missing (rolled up 1 of 2),default,,100.0000,100.0000,,0.0000,,",
		31: "north,2026-08-31,,,,,,,,,,,,false,provisional,no rollup,,,,,,,,",
		// The total sums the days with numbers; the 30th and 31st have none: partial.
		32: `north,total,1344,1344,1182,0.879464,1.000000,,,partial,partial,2026-09-02 00:00:00,2026-09-02 00:00:00,false,provisional,"no rollup: 2026-08-30..2026-08-31; turbines missing: 2026-08-10, 2026-08-15",default,,87.9464,87.9464,,0.0000,,`,
	}
	if len(rows) != 33 {
		t.Fatalf("%d CSV lines, want a header, 31 days and the total:\n%s", len(rows), cli)
	}
	for i, want := range wantRows {
		if rows[i] != want {
			t.Errorf("CSV line %d:\n%s\nwant\n%s", i+1, rows[i], want)
		}
	}

	t.Run("JSON", func(t *testing.T) {
		out, err := run("report", "monthly", "--farm", "north", "--month", "2026-08", "--format", "json")
		testdb.Must(t, err, "report --format json")
		var got report.Month
		testdb.Must(t, json.Unmarshal([]byte(out), &got), "decode")
		if got.Status != report.StatusProvisional || len(got.Days) != 31 || len(got.HeldBack) != 4 || got.HeldBack[2].Day != "2026-08-30" ||
			*got.Total.Available != 1182 {
			t.Fatalf("JSON report: %s with %d days, held back %+v, total available %v", got.Status, len(got.Days), got.HeldBack, *got.Total.Available)
		}
	})
	t.Run("Markdown", func(t *testing.T) {
		out, err := run("report", "monthly", "--farm", "north", "--month", "2026-08", "--format", "md")
		testdb.Must(t, err, "report --format md")
		for _, want := range []string{"# Availability of north, 2026-08: provisional", "Held back by 4 days:",
			"| **total** | 1344 | 1344 | 1182 | 87.95 % | 100.00 % | 87.95 % |  |  | partial |"} {
			if !strings.Contains(out, want) {
				t.Fatalf("markdown report:\n%s\nwant it to contain %q", out, want)
			}
		}
	})
	t.Run("All", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "reports")
		out, err := run("report", "monthly", "--all", "--month", "2026-08", "--out", dir)
		testdb.Must(t, err, "report --all")
		north, err := os.ReadFile(filepath.Join(dir, "north_2026-08.csv"))
		testdb.Must(t, err, "north's file")
		south, err := os.ReadFile(filepath.Join(dir, "south_2026-08.csv"))
		testdb.Must(t, err, "south's file")
		if string(north) != cli || !strings.HasSuffix(string(south), "south,total,,,,,,,,,,,,false,provisional,no rollup: 2026-08-01..2026-08-31,,,,,,,,\n") {
			t.Fatalf("--all wrote north:\n%s\nsouth:\n%s", north, south)
		}
		if want := filepath.Join(dir, "north_2026-08.csv") + ": provisional (4 days held back)\n" +
			filepath.Join(dir, "south_2026-08.csv") + ": provisional (31 days held back)\n"; out != want {
			t.Fatalf("--all printed:\n%s\nwant\n%s", out, want)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--farm", "north", "--month", "2026-13"}, `month "2026-13": want a calendar month as YYYY-MM`},
			{[]string{"--farm", "nowhere", "--month", "2026-08"}, `farm "nowhere": no such farm`},
			{[]string{"--farm", "north"}, "--month is required"},
			{[]string{"--month", "2026-08"}, "--farm is required"},
			{[]string{"--farm", "north", "--month", "2026-08", "--format", "xlsx"}, `--format "xlsx": want csv, json or md`},
			{[]string{"--all", "--month", "2026-08"}, "--all needs --out DIR"},
		} {
			_, err := run(append([]string{"report", "monthly"}, tc.args...)...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("report monthly %s: %v (exit %d), want exit 2 saying %q", strings.Join(tc.args, " "), err, exitCode(err), tc.want)
			}
		}
	})
}
