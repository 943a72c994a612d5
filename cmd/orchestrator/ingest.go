package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
)

// Ingestor builds and starts the shared ingest pipeline (each farm's rules
// come with its routes, from the control database).
func (m *Main) Ingestor(ctx context.Context) (*ingest.Ingestor, error) {
	cfg := m.Config.Ingest
	// Migrations first (a no-op when current): on a fresh database the
	// operator then hears that the fleet is empty, not that a table is.
	if _, err := m.Migrate(ctx); err != nil {
		return nil, err
	}
	shards, err := m.Shards(ctx)
	if err != nil {
		return nil, err
	}
	control := m.control
	routes, err := ingest.LoadRoutes(ctx, control, m.Now(), m.Config.RetentionDays)
	if err != nil {
		return nil, err
	}
	if routes.Len() == 0 {
		return nil, fmt.Errorf("the fleet registry is empty: run `orchestrator fleet apply FILE.yaml` first")
	}
	in := ingest.New(cfg, control, shards, routes, m.Now, nil)
	in.Start(ctx)
	// A long stream (stdin) follows fleet applies made meanwhile: new
	// turbines, changed rules.
	go in.KeepRoutes(ctx, control, m.Now, m.Config.RetentionDays, 10*time.Second)
	return in, nil
}

func (m *Main) ingestCommand() *cobra.Command {
	var formatFlag string
	var asJSON, allowRejects bool
	var maxRate float64
	cmd := &cobra.Command{
		Use:   "ingest [FILE...|-]",
		Short: "Store readings from NDJSON or CSV files (or stdin) exactly once",
		Long: "Streams each file in constant memory, routes readings to their shards, and prints a summary.\n" +
			"Refused lines are recorded with their reason (the first reject_rows_kept in ingest_reject, the rest\n" +
			"counted per kind of reason in ingest_reject_summary); everything valid is stored either way.\n\n" +
			"Exit status:\n" +
			"  0  every line was stored or was already stored\n" +
			"  1  lines could not be stored (failed: re-send them) or a file could not be read\n" +
			"  2  bad usage (an unknown flag, a bad --format or --max-rate): nothing was read\n" +
			"  3  some lines were refused (rejected), the rest stored; 0 instead with --allow-rejects\n\n" +
			"Replayed readings (received long ago) wait while a running serve's live ingest is behind on\n" +
			"their shard; --max-rate caps the lines read a second whatever live does.",
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"-"}
			}
			if maxRate < 0 || math.IsNaN(maxRate) || math.IsInf(maxRate, 0) {
				return &exitError{code: 2, err: fmt.Errorf("--max-rate %v: want lines a second, above 0 (0: no limit)", maxRate)}
			}
			if formatFlag != "" {
				if _, err := reading.ParseFormat(formatFlag); err != nil {
					return &exitError{code: 2, err: fmt.Errorf("--format: %w", err)}
				}
			}
			// Files and stdin are bulk sources: larger transactions.
			m.Config.Ingest = m.Config.Ingest.Bulk()
			m.Config.Ingest.MaxRate = maxRate
			in, err := m.Ingestor(c.Context())
			if err != nil {
				return err
			}
			defer in.Close()
			var total ingest.Summary
			var files []fileSummary
			var failed bool
			var lastErr string
			for _, path := range args {
				sum, err := m.ingestPath(c.Context(), in, path, formatFlag, !asJSON)
				total = total.Plus(sum) // line numbers are per file: printed per file
				files = append(files, fileSummary{Path: path, Summary: sum})
				if err != nil {
					failed = true
					fmt.Fprintf(os.Stderr, "orchestrator: ingest %s: %v\n", path, err)
					lastErr = err.Error()
				}
				if !asJSON {
					printSummary(path, sum)
				}
			}
			total.Error = lastErr
			if y := in.Yielded(); y > 0 {
				fmt.Fprintf(os.Stderr, "orchestrator: ingest: replayed readings waited %s for live ingest (live first)\n", y.Round(100*time.Millisecond))
			}
			switch {
			case asJSON && len(files) == 1:
				// One source: its summary, with its rejects and failed lines.
				_ = json.NewEncoder(os.Stdout).Encode(files[0].Summary)
			case asJSON:
				// Line numbers are per file: the totals, then each file's own.
				_ = json.NewEncoder(os.Stdout).Encode(struct {
					ingest.Summary
					Files []fileSummary `json:"files"`
				}{total, files})
			case len(args) > 1:
				printSummary("total", total)
			}
			return ingestExit(total, failed, allowRejects)
		},
	}
	cmd.Flags().StringVar(&formatFlag, "format", "", "ndjson or csv (default: from the file extension; stdin: ndjson)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON object")
	cmd.Flags().BoolVar(&allowRejects, "allow-rejects", false, "exit 0 when lines were refused but every valid line was stored")
	cmd.Flags().Float64Var(&maxRate, "max-rate", 0, "read at most this many lines a second (0: as fast as the shards take them)")
	return cmd
}

// ingestExit is the exit status a script reads: failures (lines to
// re-send) outrank refusals, which outrank success.
func ingestExit(total ingest.Summary, failed, allowRejects bool) error {
	switch {
	case failed || total.Failed > 0:
		return &exitError{code: 1, err: fmt.Errorf("not every row could be stored (%d failed)", total.Failed)}
	case total.Rejected > 0 && !allowRejects:
		return &exitError{code: 3, err: fmt.Errorf("%d line(s) refused, the rest stored (see the reasons above; --allow-rejects exits 0)", total.Rejected)}
	}
	return nil
}

func (m *Main) ingestPath(ctx context.Context, in *ingest.Ingestor, path, formatFlag string, progress bool) (ingest.Summary, error) {
	format := reading.FormatFromPath(path)
	if formatFlag != "" {
		f, err := reading.ParseFormat(formatFlag)
		if err != nil {
			return ingest.Summary{}, err
		}
		format = f
	}
	var r io.Reader = os.Stdin
	size := int64(-1)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return ingest.Summary{}, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		r = f
	}
	if progress && isTerminal(os.Stderr) {
		bar := progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription("ingest "+path), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		defer bar.Finish()
		r = io.TeeReader(r, bar)
	}
	dec, err := reading.NewDecoder(format, r)
	if err != nil {
		return ingest.Summary{}, err
	}
	return in.Ingest(ctx, path, dec)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// fileSummary is one source's summary in --json output of several files.
type fileSummary struct {
	Path string `json:"path"`
	ingest.Summary
}

func printSummary(what string, s ingest.Summary) {
	fmt.Printf("%s: %d accepted, %d duplicate, %d rejected (see ingest_reject), %d failed; lanes %d live / %d backfill; %d early; %d farm-day-shard(s) marked dirty\n",
		what, s.Accepted, s.Duplicate, s.Rejected, s.Failed, s.Live, s.Backfill, s.Early, s.DirtyMarks)
	for _, r := range s.Rejects {
		fmt.Printf("  line %d: %s\n", r.Line, r.Reason)
	}
	if more := s.RejectsKept - int64(len(s.Rejects)); more > 0 {
		fmt.Printf("  ... and %d more rejected line(s) in ingest_reject\n", more)
	}
	if len(s.RejectsNotKept) > 0 {
		var notKept int64
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(s.RejectsNotKept)) {
			notKept += s.RejectsNotKept[k]
			kinds = append(kinds, fmt.Sprintf("%s %d", k, s.RejectsNotKept[k]))
		}
		fmt.Printf("  ... and %d more rejected line(s) not stored, over the rules' reject_rows_kept (%d kept; counted in ingest_reject_summary): %s\n",
			notKept, s.RejectsKept, strings.Join(kinds, ", "))
	}
	if len(s.FailedLines) > 0 {
		var b strings.Builder
		for i, r := range s.FailedLines {
			if i == 20 {
				fmt.Fprintf(&b, " ... (%d ranges)", len(s.FailedLines))
				break
			}
			if r.From == r.To {
				fmt.Fprintf(&b, " %d", r.From)
			} else {
				fmt.Fprintf(&b, " %d-%d", r.From, r.To)
			}
		}
		fmt.Printf("  not stored, re-send lines:%s\n", b.String())
	}
}
