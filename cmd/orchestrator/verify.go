package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/verify"
)

func (m *Main) verifyCommand() *cobra.Command {
	var farm, from, to string
	cmd := &cobra.Command{
		Use:   "verify --farm F --from DATE [--to DATE]",
		Short: "Check that every rolled-up turbine-day of a farm was computed from the readings there now (writes nothing; exit 1 naming each that differs)",
		Long: "Recomputes, on each shard, the input fingerprint of every turbine_day row of the farm's days (how many\n" +
			"readings, and an order-independent hash of their recorded_at and available) and compares it with the\n" +
			"one stored when the row was computed. Exit 0 when all match; 1 naming each turbine-day that differs\n" +
			"(a reading deleted or edited by hand, a restore, a failed move). Run it before signing a month.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d0, err := time.Parse(time.DateOnly, from)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--from: want a date YYYY-MM-DD, got %q", from)}
			}
			d1 := d0
			if to != "" {
				if d1, err = time.Parse(time.DateOnly, to); err != nil || d1.Before(d0) {
					return &exitError{code: 2, err: fmt.Errorf("--to: want a date YYYY-MM-DD not before --from, got %q", to)}
				}
			}
			shards, err := m.Shards(c.Context())
			if err != nil {
				return err
			}
			res, err := verify.Farm(c.Context(), controldb.New(m.control), shards, farm, localday.DateOf(d0), localday.DateOf(d1))
			if err != nil {
				return err
			}
			span := fmt.Sprintf("%s %s to %s", farm, d0.Format(time.DateOnly), d1.Format(time.DateOnly))
			if len(res.Mismatches) == 0 {
				fmt.Printf("verified %s: %s turbine-days on %d rolled-up day(s), every one computed from the readings there now\n",
					span, provenance.Count(int64(res.Rows)), res.Days)
				return nil
			}
			for _, mm := range res.Mismatches {
				fmt.Println(mm)
			}
			return &exitError{code: 1, err: fmt.Errorf("verify %s: %d of %s turbine-days differ from their readings (listed above); recompute them (orchestrator rollup) once the cause is known",
				span, len(res.Mismatches), provenance.Count(int64(res.Rows)))}
		},
	}
	cmd.Flags().StringVar(&farm, "farm", "", "farm id")
	cmd.Flags().StringVar(&from, "from", "", "first farm-local day (YYYY-MM-DD)")
	cmd.Flags().StringVar(&to, "to", "", "last farm-local day (default: --from)")
	_ = cmd.MarkFlagRequired("farm")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}
