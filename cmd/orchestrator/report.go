package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/report"
)

func (m *Main) reportCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "report", Short: "Reports on the control database (read-only)"}
	cmd.AddCommand(m.reportMonthlyCommand(), m.reportContractCommand())
	return cmd
}

func (m *Main) reportMonthlyCommand() *cobra.Command {
	var farm, month, format, out string
	var all bool
	cmd := &cobra.Command{
		Use:   "monthly --farm F --month YYYY-MM [--format csv|json|md] [--out DIR] | --all --out DIR",
		Short: "The monthly availability report: a row per farm-local day, the month total from the summed counts, final, incomplete or provisional and why",
		Long: "Runs sql/reports/monthly_availability.sql (embedded; the same file DBAs run with psql) with --farm and\n" +
			"--month bound as its psql variables. The month is final only when every day has ended, was rolled up\n" +
			"after it closed, has no recompute pending and no more slots without a reading than its farm allows (or\n" +
			"was accepted: orchestrator day accept); incomplete when only that holds days back; otherwise\n" +
			"provisional. The days holding it back are named with the reason. It only reads: it does not migrate, so it also runs as a member of\n" +
			"galewatch_reporting (DATABASE_URL with that login).\n\n" +
			"Without --out the report goes to standard output; with --out DIR it is written to\n" +
			"DIR/<farm>_<month>.<format>. --all writes every farm's month into --out DIR.",
		Example: "  orchestrator report monthly --farm ardnave-point --month 2026-08 > ardnave-point_2026-08.csv\n" +
			"  orchestrator report monthly --farm ardnave-point --month 2026-08 --format md\n" +
			"  orchestrator report monthly --all --month 2026-08 --out reports/",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			f, err := report.ParseFormat(format)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--%w", err)}
			}
			switch {
			case month == "":
				return &exitError{code: 2, err: errors.New("--month is required (YYYY-MM)")}
			case all && farm != "":
				return &exitError{code: 2, err: errors.New("--all and --farm: give one of them")}
			case all && out == "":
				return &exitError{code: 2, err: errors.New("--all needs --out DIR (one file per farm)")}
			case !all && farm == "":
				return &exitError{code: 2, err: errors.New("--farm is required (or --all --out DIR)")}
			}
			control, err := m.Control(ctx)
			if err != nil {
				return err
			}
			var written []report.Exported
			switch {
			case all:
				written, err = report.ExportAll(ctx, control, month, f, out, m.Now())
			case out != "":
				var e report.Exported
				if e, err = report.Export(ctx, control, farm, month, f, out, m.Now()); err == nil {
					written = append(written, e)
				}
			default:
				var rep report.Month
				if rep, err = report.MonthlyAt(ctx, control, farm, month, m.Now()); err == nil {
					err = report.Write(c.OutOrStdout(), rep, f)
				}
			}
			for _, e := range written {
				fmt.Fprintf(c.OutOrStdout(), "%s: %s (%d %s held back)\n", e.Path, e.Status, e.HeldBack, dayWord(e.HeldBack))
			}
			if errors.Is(err, report.ErrUnknownFarm) || errors.Is(err, report.ErrBadMonth) || errors.Is(err, report.ErrNoFarms) {
				return &exitError{code: 2, err: err}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&farm, "farm", "", "farm id")
	fl.StringVar(&month, "month", "", "calendar month, YYYY-MM (the farm's local days)")
	fl.StringVar(&format, "format", string(report.FormatCSV), "csv (as psql --csv prints the file), json (as the API serves it) or md")
	fl.StringVar(&out, "out", "", "write DIR/<farm>_<month>.<format> instead of standard output")
	fl.BoolVar(&all, "all", false, "every farm, one file each in --out DIR")
	return cmd
}

func dayWord(n int) string {
	if n == 1 {
		return "day"
	}
	return "days"
}

func (m *Main) reportContractCommand() *cobra.Command {
	var farm, year, format, out string
	var all bool
	cmd := &cobra.Command{
		Use:   "contract --farm F --year YYYY [--format csv|json|md] [--out DIR] | --all --year YYYY --out DIR",
		Short: "The contract year: availability against the warranty, the shortfall in points, turbine-hours and MWh, and the LDs or bonus the contract's terms make of it",
		Long: "Runs sql/reports/contract_year.sql (embedded; the same file DBAs run with psql) with --farm and --year\n" +
			"bound as its psql variables. --year is the calendar year the contract year starts in (a contract year\n" +
			"from 1 April: 2026 is 2026-04-01 to 2027-03-31). Rows: each period of the year (a run of days counted\n" +
			"by one contract, with its name and terms; a year spanning a contract change is settled piecewise), each\n" +
			"month begun, the year to date, and every day accepted as it is with its note. The year is final only\n" +
			"when every day of it so far is final; why names the days holding it back. It only reads.\n\n" +
			"Without --out the report goes to standard output; with --out DIR it is written to\n" +
			"DIR/<farm>_contract_<year>.<format>. --all writes every farm with a contract into --out DIR.",
		Example: "  orchestrator report contract --farm ardnave-point --year 2026 > ardnave-point_contract_2026.csv\n" +
			"  orchestrator report contract --farm ardnave-point --year 2026 --format md\n" +
			"  orchestrator report contract --all --year 2026 --out reports/",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			f, err := report.ParseFormat(format)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--%w", err)}
			}
			switch {
			case year == "":
				return &exitError{code: 2, err: errors.New("--year is required (YYYY: the calendar year the contract year starts in)")}
			case all && farm != "":
				return &exitError{code: 2, err: errors.New("--all and --farm: give one of them")}
			case all && out == "":
				return &exitError{code: 2, err: errors.New("--all needs --out DIR (one file per farm)")}
			case !all && farm == "":
				return &exitError{code: 2, err: errors.New("--farm is required (or --all --out DIR)")}
			}
			control, err := m.Control(ctx)
			if err != nil {
				return err
			}
			var written []report.Exported
			switch {
			case all:
				written, err = report.ExportYearAll(ctx, control, year, f, out, m.Now())
			case out != "":
				var e report.Exported
				if e, err = report.ExportYear(ctx, control, farm, year, f, out, m.Now()); err == nil {
					written = append(written, e)
				}
			default:
				var y report.ContractYear
				if y, err = report.ContractYearAt(ctx, control, farm, year, m.Now()); err == nil {
					err = report.WriteYear(c.OutOrStdout(), y, f)
				}
			}
			for _, e := range written {
				fmt.Fprintf(c.OutOrStdout(), "%s: %s (%d %s held back)\n", e.Path, e.Status, e.HeldBack, monthWord(e.HeldBack))
			}
			if errors.Is(err, report.ErrUnknownFarm) || errors.Is(err, report.ErrBadYear) || errors.Is(err, report.ErrNoContracts) {
				return &exitError{code: 2, err: err}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&farm, "farm", "", "farm id")
	fl.StringVar(&year, "year", "", "contract year, YYYY: the calendar year it starts in")
	fl.StringVar(&format, "format", string(report.FormatCSV), "csv (as psql --csv prints the file), json or md")
	fl.StringVar(&out, "out", "", "write DIR/<farm>_contract_<year>.<format> instead of standard output")
	fl.BoolVar(&all, "all", false, "every farm with a contract, one file each in --out DIR")
	return cmd
}

func monthWord(n int) string {
	if n == 1 {
		return "month"
	}
	return "months"
}
