package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/report"
)

func (m *Main) dayCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "day", Short: "A farm-day's sign-off: accept an incomplete day (audited)"}
	var farm, day, note string
	accept := &cobra.Command{
		Use:   "accept --farm F --day YYYY-MM-DD --note TEXT",
		Short: "Accept an incomplete farm-day as it is: it becomes final, with who, when and why on the report",
		Long: "A day that has ended and settled but has more slots without a reading than the farm's threshold\n" +
			"(completeness_alert_pm, default 10 ‰) is incomplete, and its month cannot be final. When the\n" +
			"readings will never come (the turbine had no power, the logger died), accept it: the day is final\n" +
			"with the numbers it has, and the report notes who accepted it, when and why. The acceptance is\n" +
			"kept (farm_day_acceptance) and holds while no more of the day's slots are missing than now.\n" +
			"The note is one line of text: UTF-8 without control (tab, line break), bidi or zero-width\n" +
			"characters, at most 2,000 bytes. Refused (exit 2) for a day that is not incomplete or such a note.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d, err := time.Parse(time.DateOnly, day)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--day: want a date YYYY-MM-DD, got %q", day)}
			}
			control, err := m.Control(c.Context())
			if err != nil {
				return err
			}
			a, err := report.Accept(c.Context(), control, farm, localday.DateOf(d), note, m.Now())
			if errors.Is(err, report.ErrUnknownFarm) || errors.Is(err, report.ErrNotIncomplete) || errors.Is(err, report.ErrInvalidNote) {
				return &exitError{code: 2, err: err}
			}
			if err != nil {
				return err
			}
			fmt.Printf("accepted %s %s with %s of %s slots without a reading (acceptance %d, by %s at %s): the day is final; the report shows the note\n",
				a.FarmID, a.Day, provenance.Count(a.Expected-a.Received), provenance.Count(a.Expected), a.ID, a.By, a.At.UTC().Format(time.RFC3339))
			return nil
		},
	}
	accept.Flags().StringVar(&farm, "farm", "", "farm id")
	accept.Flags().StringVar(&day, "day", "", "farm-local day (YYYY-MM-DD)")
	accept.Flags().StringVar(&note, "note", "", "why the day is accepted as it is (required)")
	for _, f := range []string{"farm", "day", "note"} {
		_ = accept.MarkFlagRequired(f)
	}
	cmd.AddCommand(accept)
	return cmd
}
