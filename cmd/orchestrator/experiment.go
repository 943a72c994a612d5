package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/experiment"
)

func (m *Main) experimentCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "experiment", Short: "Studies run through the real pipeline on scratch databases"}
	cfg := experiment.DefaultConfig()
	var asJSON, keep bool
	wm := &cobra.Command{
		Use:   "watermark [--seed N] [--json]",
		Short: "The watermark study: divergence at publication per allowed lateness, corrections, open divergence, total work",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if _, err := m.Control(ctx); err != nil {
				return err
			}
			if err := cfg.Check(); err != nil {
				return fmt.Errorf("--windows, --events: %w", err)
			}
			env, name, drop, err := experiment.Scratch(ctx, m.controlDSN, cfg)
			if err != nil {
				return err
			}
			if keep {
				fmt.Fprintf(os.Stderr, "experiment: scratch databases %s (and %s_s1, %s_s2), kept\n", name, name, name)
			} else {
				fmt.Fprintf(os.Stderr, "experiment: scratch databases %s (and %s_s1, %s_s2), dropped at the end\n", name, name, name)
				defer drop()
			}
			cfg.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
			res, err := experiment.Run(ctx, env, cfg)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return res.WriteText(os.Stdout)
		},
	}
	wm.Flags().Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed of the event draw")
	wm.Flags().IntVar(&cfg.Windows, "windows", cfg.Windows, "windows of events")
	wm.Flags().IntVar(&cfg.EventsPerWindow, "events", cfg.EventsPerWindow, "events per window (a multiple of 20)")
	wm.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	wm.Flags().BoolVar(&keep, "keep", false, "keep the scratch databases (galewatch_experiment_*) for inspection")
	cmd.AddCommand(wm)
	return cmd
}
