package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/lateness"
	"github.com/galewatch/galewatch/internal/schema"
)

func (m *Main) latenessCommand() *cobra.Command {
	var farm, from, to string
	var asJSON bool
	measurer := &lateness.Measurer{ShardTimeout: lateness.DefaultShardTimeout, Worst: lateness.DefaultWorst}
	cmd := &cobra.Command{
		Use:   "lateness --farm F --from T --to T [--json]",
		Short: "Measure how late a farm's readings arrive (lag quantiles, lanes, clock offsets, early readings) and recommend an allowed lateness",
		Long: "Over the farm's readings with recorded_at in [--from, --to): quantiles of lag (received_at - recorded_at)\n" +
			"overall and per lane, each turbine's estimated clock offset (the worst named), early readings, and a\n" +
			"recommended allowed lateness with its rule. The lane threshold and early tolerance are the farm's\n" +
			"(farm_rules). Every shard holding the farm's turbines is asked in parallel; one that does not answer is\n" +
			"named and the report is marked partial (exit status 1, the report still printed).",
		Example: "  orchestrator lateness --farm ardnave-point --from 2026-08-01 --to 2026-08-02\n" +
			"  orchestrator lateness --farm ardnave-point --from 2026-08-01T10:00:00Z --to 2026-08-01T11:00:00Z --json",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if farm == "" {
				return &exitError{code: 2, err: errors.New("--farm is required")}
			}
			fromBound, err := lateness.ParseBound("--from", from)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			toBound, err := lateness.ParseBound("--to", to)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if measurer.ShardTimeout <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("--shard-timeout %s: must be positive", measurer.ShardTimeout)}
			}
			if measurer.Worst < 1 {
				return &exitError{code: 2, err: fmt.Errorf("--worst %d: must be at least 1", measurer.Worst)}
			}
			if measurer.Control, err = m.Control(ctx); err != nil {
				return err
			}
			// Only the control schema (where the histogram's buckets are
			// defined): the shards are only read, and one that is down
			// makes the report partial rather than failing the command.
			if _, err := schema.MigrateControl(ctx, measurer.Control); err != nil {
				return err
			}
			if measurer.Shards, err = m.Shards(ctx); err != nil {
				return err
			}
			rep, err := measurer.Measure(ctx, farm, fromBound, toBound)
			if errors.Is(err, lateness.ErrUnknownFarm) || errors.Is(err, lateness.ErrEmptyRange) {
				return &exitError{code: 2, err: err}
			}
			if err != nil {
				return err
			}
			if asJSON {
				err = json.NewEncoder(c.OutOrStdout()).Encode(rep)
			} else {
				err = rep.WriteText(c.OutOrStdout())
			}
			if err != nil {
				return err
			}
			if rep.Partial {
				names := make([]string, len(rep.ShardsFailed))
				for i, f := range rep.ShardsFailed {
					names[i] = f.Shard
				}
				return &exitError{code: 1, err: fmt.Errorf("lateness of %s is partial: shard(s) %s did not answer", farm, strings.Join(names, ", "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&farm, "farm", "", "farm id")
	f.StringVar(&from, "from", "", "start of the range of recorded_at: RFC 3339, or YYYY-MM-DD for that farm-local day's start")
	f.StringVar(&to, "to", "", "end of the range (exclusive): RFC 3339, or YYYY-MM-DD for that farm-local day's start")
	f.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	f.DurationVar(&measurer.ShardTimeout, "shard-timeout", measurer.ShardTimeout, "how long each shard may take before it is reported as failed")
	f.IntVar(&measurer.Worst, "worst", measurer.Worst, "how many turbines to name, by |estimated clock offset|")
	return cmd
}
