package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/report"
)

func (m *Main) reportCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "report", Short: "Reports on the control database (read-only)"}
	cmd.AddCommand(m.reportMonthlyCommand(), m.reportContractCommand())
	return cmd
}

// reportKind is what one report command runs: one farm's report for a
// period (a month, a contract year) to a writer or into a directory, or
// every farm's into a directory. The flags, their checks and what is
// printed are the same for each.
type reportKind struct {
	period     string // the flag naming the period: month, year
	periodWant string // what it takes, for the error when it is missing
	unit       string // what a file's held-back count counts: day, month
	write      func(ctx context.Context, control *pgxpool.Pool, farm, period string, f report.Format, w io.Writer) error
	export     func(ctx context.Context, control *pgxpool.Pool, farm, period string, f report.Format, dir string) (report.Exported, error)
	exportAll  func(ctx context.Context, control *pgxpool.Pool, period string, f report.Format, dir string) ([]report.Exported, error)
	// refused are the errors that are the caller's (exit 2).
	refused []error
}

// run is the command's RunE over the flags it was given.
func (k reportKind) run(m *Main, farm, period, format, out *string, all *bool) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, _ []string) error {
		ctx := c.Context()
		f, err := report.ParseFormat(*format)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--%w", err)}
		}
		switch {
		case *period == "":
			return &exitError{code: 2, err: fmt.Errorf("--%s is required (%s)", k.period, k.periodWant)}
		case *all && *farm != "":
			return &exitError{code: 2, err: errors.New("--all and --farm: give one of them")}
		case *all && *out == "":
			return &exitError{code: 2, err: errors.New("--all needs --out DIR (one file per farm)")}
		case !*all && *farm == "":
			return &exitError{code: 2, err: errors.New("--farm is required (or --all --out DIR)")}
		}
		control, err := m.Control(ctx)
		if err != nil {
			return err
		}
		var written []report.Exported
		switch {
		case *all:
			written, err = k.exportAll(ctx, control, *period, f, *out)
		case *out != "":
			var e report.Exported
			if e, err = k.export(ctx, control, *farm, *period, f, *out); err == nil {
				written = append(written, e)
			}
		default:
			err = k.write(ctx, control, *farm, *period, f, c.OutOrStdout())
		}
		for _, e := range written {
			unit := k.unit
			if e.HeldBack != 1 {
				unit += "s"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: %s (%d %s held back)\n", e.Path, e.Status, e.HeldBack, unit)
		}
		for _, r := range k.refused {
			if errors.Is(err, r) {
				return &exitError{code: 2, err: err}
			}
		}
		return err
	}
}

func (m *Main) reportMonthlyCommand() *cobra.Command {
	var farm, month, format, out string
	var all bool
	kind := reportKind{
		period: "month", periodWant: "YYYY-MM", unit: "day",
		write: func(ctx context.Context, control *pgxpool.Pool, farm, month string, f report.Format, w io.Writer) error {
			rep, err := report.MonthlyAt(ctx, control, farm, month, m.Now())
			if err != nil {
				return err
			}
			return report.Write(w, rep, f)
		},
		export: func(ctx context.Context, control *pgxpool.Pool, farm, month string, f report.Format, dir string) (report.Exported, error) {
			return report.Export(ctx, control, farm, month, f, dir, m.Now())
		},
		exportAll: func(ctx context.Context, control *pgxpool.Pool, month string, f report.Format, dir string) ([]report.Exported, error) {
			return report.ExportAll(ctx, control, month, f, dir, m.Now())
		},
		refused: []error{report.ErrUnknownFarm, report.ErrBadMonth, report.ErrNoFarms},
	}
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
		RunE: kind.run(m, &farm, &month, &format, &out, &all),
	}
	fl := cmd.Flags()
	fl.StringVar(&farm, "farm", "", "farm id")
	fl.StringVar(&month, "month", "", "calendar month, YYYY-MM (the farm's local days)")
	fl.StringVar(&format, "format", string(report.FormatCSV), "csv (as psql --csv prints the file), json (as the API serves it) or md")
	fl.StringVar(&out, "out", "", "write DIR/<farm>_<month>.<format> instead of standard output")
	fl.BoolVar(&all, "all", false, "every farm, one file each in --out DIR")
	return cmd
}

func (m *Main) reportContractCommand() *cobra.Command {
	var farm, year, format, out string
	var all bool
	kind := reportKind{
		period: "year", periodWant: "YYYY: the calendar year the contract year starts in", unit: "month",
		write: func(ctx context.Context, control *pgxpool.Pool, farm, year string, f report.Format, w io.Writer) error {
			y, err := report.ContractYearAt(ctx, control, farm, year, m.Now())
			if err != nil {
				return err
			}
			return report.WriteYear(w, y, f)
		},
		export: func(ctx context.Context, control *pgxpool.Pool, farm, year string, f report.Format, dir string) (report.Exported, error) {
			return report.ExportYear(ctx, control, farm, year, f, dir, m.Now())
		},
		exportAll: func(ctx context.Context, control *pgxpool.Pool, year string, f report.Format, dir string) ([]report.Exported, error) {
			return report.ExportYearAll(ctx, control, year, f, dir, m.Now())
		},
		refused: []error{report.ErrUnknownFarm, report.ErrBadYear, report.ErrNoContracts},
	}
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
		RunE: kind.run(m, &farm, &year, &format, &out, &all),
	}
	fl := cmd.Flags()
	fl.StringVar(&farm, "farm", "", "farm id")
	fl.StringVar(&year, "year", "", "contract year, YYYY: the calendar year it starts in")
	fl.StringVar(&format, "format", string(report.FormatCSV), "csv (as psql --csv prints the file), json (as the API serves it) or md")
	fl.StringVar(&out, "out", "", "write DIR/<farm>_contract_<year>.<format> instead of standard output")
	fl.BoolVar(&all, "all", false, "every farm with a contract, one file each in --out DIR")
	return cmd
}
