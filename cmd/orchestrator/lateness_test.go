package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// latenessReport is the --json object as a consumer would read it.
type latenessReport struct {
	Farm  string    `json:"farm"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	LagMS *struct {
		Min, P50, P95, P99, P999, Max float64
	} `json:"lag_ms"`
	CorrectedLagMS *struct{ P99 float64 } `json:"corrected_lag_ms"`
	Readings       int64                  `json:"readings"`
	Lanes          struct {
		Live, Backfill struct {
			Readings int64 `json:"readings"`
		}
	} `json:"lanes"`
	Turbines struct {
		Measured int `json:"measured"`
		Worst    []struct {
			TurbineID     string  `json:"turbine_id"`
			Shard         string  `json:"shard"`
			ClockOffsetMS float64 `json:"clock_offset_ms"`
			Early         int64   `json:"early"`
		} `json:"worst"`
	} `json:"turbines"`
	Early struct {
		Readings int64 `json:"readings"`
		Turbines int   `json:"turbines"`
	} `json:"early"`
	Recommended *int `json:"recommended_allowed_lateness_s"`
	Resolution  struct {
		FineWidthMS int64 `json:"fine_width_ms"`
	} `json:"resolution"`
	ShardsFailed []struct{ Shard, Error string } `json:"shards_failed"`
	Partial      bool                            `json:"partial"`
}

// TestLatenessCommand runs `orchestrator lateness` as a process on
// hand-built readings whose every number is known: AP-001 (s1) and AP-150
// (s2) with exact clocks and delays 0..99 s, AP-250 (s3) with the same
// delays and a clock 5 s ahead (lags -5..94 s), 100 readings each. Text and
// --json; bad values are refused naming the flag (exit 2); a shard that
// cannot be reached gives a partial report (exit 1).
func TestLatenessCommand(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	env := testdb.New(t, testdb.ArdnaveFleet)
	start := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	for _, tb := range []struct {
		id     string
		offset time.Duration
	}{{"AP-001", 0}, {"AP-150", 0}, {"AP-250", 5 * time.Second}} {
		for i := 0; i < 100; i++ {
			slot := start.Add(time.Duration(2*i) * time.Second)
			fmt.Fprintf(&b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":1}`+"\n",
				tb.id, slot.Add(tb.offset).Format(time.RFC3339), slot.Add(time.Duration(i)*time.Second).Format(time.RFC3339))
		}
	}
	cfg := ConfigFromEnv()
	cfg.DatabaseURL = env.ControlDSN
	m := &Main{Config: cfg, Now: func() time.Time { return start.Add(24 * time.Hour) }}
	in, err := m.Ingestor(context.Background())
	testdb.Must(t, err, "ingestor")
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(b.String()))
	testdb.Must(t, err, "decoder")
	sum, err := in.Ingest(context.Background(), "test", dec)
	testdb.Must(t, err, "ingest")
	in.Close()
	m.Close()
	if sum.Accepted != 300 {
		t.Fatalf("ingest accepted %d, want 300", sum.Accepted)
	}

	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"lateness"}, args...)...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+env.ControlDSN)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("orchestrator lateness %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), errOut.String(), code
	}
	day := []string{"--farm", "ardnave-point", "--from", "2026-08-01", "--to", "2026-08-02"}

	t.Run("Text", func(t *testing.T) {
		out, errOut, code := run(day...)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
		}
		for _, want := range []string{
			"Lateness of ardnave-point (Europe/London): readings with recorded_at in [2026-08-01T00:00:00+01:00, 2026-08-02T00:00:00+01:00)",
			"shards: s1, s2, s3 (all answered)",
			"early readings (lag < -2.000 s): 3, from 1 turbine(s)",
			"recommended allowed lateness: 100 s",
			"p99 of clock-corrected lag is 98.000 s over 300 readings, so 100 s is the smallest positive multiple of 5 s",
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("output lacks %q:\n%s", want, out)
			}
		}
		// The worst turbine's row: id, shard, offset, early, readings, windows.
		if !hasRow(out, "AP-250 s3 +5.000 s 3 100 1") {
			t.Fatalf("output has no row \"AP-250 s3 +5.000 s 3 100 1\":\n%s", out)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		out, errOut, code := run(append(day, "--json")...)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
		}
		var r latenessReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, out)
		}
		if !r.From.Equal(time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC)) || !r.To.Equal(time.Date(2026, 8, 1, 23, 0, 0, 0, time.UTC)) {
			t.Errorf("range [%s, %s), want the London day [2026-07-31T23:00Z, 2026-08-01T23:00Z)", r.From, r.To)
		}
		// Sorted lags: two copies of 0..99 s and -5..94 s; ranks 150 and 297.
		if r.Readings != 300 || r.LagMS == nil || r.LagMS.Min != -5000 || r.LagMS.P50 != 48000 || r.LagMS.P99 != 98000 || r.LagMS.Max != 99000 {
			t.Errorf("readings %d lag_ms %+v, want 300 with min -5000, p50 48000, p99 98000, max 99000", r.Readings, r.LagMS)
		}
		// lag <= 60 s: 61 + 61 + 66.
		if r.Lanes.Live.Readings != 188 || r.Lanes.Backfill.Readings != 112 {
			t.Errorf("lanes live %d backfill %d, want 188 and 112", r.Lanes.Live.Readings, r.Lanes.Backfill.Readings)
		}
		if r.Turbines.Measured != 3 || len(r.Turbines.Worst) != 3 || r.Turbines.Worst[0].TurbineID != "AP-250" ||
			r.Turbines.Worst[0].Shard != "s3" || r.Turbines.Worst[0].ClockOffsetMS != 5000 || r.Turbines.Worst[0].Early != 3 {
			t.Errorf("turbines %+v, want 3 measured, AP-250 on s3 first with +5000 ms and 3 early", r.Turbines)
		}
		if r.Early.Readings != 3 || r.Early.Turbines != 1 {
			t.Errorf("early %+v, want 3 readings (lags -5, -4, -3 s) from 1 turbine", r.Early)
		}
		// Corrected lags are three copies of 0..99 s: p99 is 98 s, so 100 s.
		if r.CorrectedLagMS == nil || r.CorrectedLagMS.P99 != 98000 || r.Recommended == nil || *r.Recommended != 100 {
			t.Errorf("corrected %+v recommended %v, want p99 98000 ms and 100 s", r.CorrectedLagMS, r.Recommended)
		}
		if r.Resolution.FineWidthMS != 1 || r.Partial || len(r.ShardsFailed) != 0 {
			t.Errorf("resolution %+v partial %v failed %v, want 1 ms, complete", r.Resolution, r.Partial, r.ShardsFailed)
		}
	})

	t.Run("BadValues", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--farm", "ardnave-point", "--from", "2026-13-01", "--to", "2026-08-02"}, `--from "2026-13-01" is neither an RFC 3339 instant`},
			{[]string{"--farm", "ardnave-point", "--from", "2026-08-01", "--to", "tomorrow"}, `--to "tomorrow" is neither`},
			{[]string{"--farm", "ardnave-point", "--from", "2026-08-01"}, "--to is required"},
			{[]string{"--from", "2026-08-01", "--to", "2026-08-02"}, "--farm is required"},
			{[]string{"--farm", "nowhere-point", "--from", "2026-08-01", "--to", "2026-08-02"}, `unknown farm "nowhere-point"`},
			{[]string{"--farm", "ardnave-point", "--from", "2026-08-02", "--to", "2026-08-01"}, "--to 2026-08-01 (2026-08-01T00:00:00+01:00) is not after --from 2026-08-02"},
			{append(slices.Clone(day), "--worst", "0"), "--worst 0: must be at least 1"},
		} {
			out, errOut, code := run(c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) || out != "" {
				t.Errorf("lateness %s: exit %d, stderr %q, stdout %q; want exit 2, an error containing %q and no report",
					strings.Join(c.args, " "), code, errOut, out, c.want)
			}
		}
		// cobra's own parse error names the flag too (exit 1, as for every command).
		if _, errOut, code := run(append(slices.Clone(day), "--shard-timeout", "soon")...); code == 0 || !strings.Contains(errOut, `"--shard-timeout"`) {
			t.Errorf("--shard-timeout soon: exit %d, stderr %q, want a failure naming the flag", code, errOut)
		}
	})

	t.Run("ShardUnreachable", func(t *testing.T) {
		testdb.Exec(t, env.Control, `UPDATE shard SET dsn = 'postgres://galewatch@127.0.0.1:1/galewatch_gone' WHERE name = 's2'`)
		defer testdb.Exec(t, env.Control, `UPDATE shard SET dsn = NULL WHERE name = 's2'`)
		out, errOut, code := run(append(slices.Clone(day), "--json")...)
		if code != 1 || !strings.Contains(errOut, "lateness of ardnave-point is partial: shard(s) s2 did not answer") {
			t.Fatalf("exit %d, stderr %q: want 1 and the partial shard named", code, errOut)
		}
		var r latenessReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, out)
		}
		if !r.Partial || len(r.ShardsFailed) != 1 || r.ShardsFailed[0].Shard != "s2" || r.Readings != 200 || r.Turbines.Measured != 2 {
			t.Fatalf("partial %v failed %+v readings %d turbines %d: want partial, s2 failed, 200 readings from AP-001 and AP-250",
				r.Partial, r.ShardsFailed, r.Readings, r.Turbines.Measured)
		}
	})
}

// hasRow says whether some line of out has exactly the space-separated
// fields of row, however aligned.
func hasRow(out, row string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == row {
			return true
		}
	}
	return false
}
