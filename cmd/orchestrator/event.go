package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/event"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/text"
)

func (m *Main) eventCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "event", Short: "Operator events: intervals of an availability category the readings cannot say (audited, never deleted)"}
	var spec event.Spec
	var from, to string
	add := &cobra.Command{
		Use:   "add --farm F [--turbine T ...] --from INSTANT --to INSTANT --category C --note TEXT [--by NAME]",
		Short: "Enter an event and queue the recompute of every farm-day it covers",
		Long: "Records that, from --from to --to (RFC 3339 instants, the end excluded), the farm's turbines (or\n" +
			"those given with --turbine) were in category C — a grid curtailment the turbines do not see\n" +
			"(requested_shutdown), force_majeure, scheduled_maintenance, … (docs/operator.md, \"Operator\n" +
			"events\"). A slot starting in it takes the better, by the contract's priority, of C and what its\n" +
			"readings say. The farm-days it covers that have begun are recomputed (rollup_day jobs, worked by\n" +
			"a running serve or work). Who (--by, the OS user by default) and why (--note) are kept: each one\n" +
			"line of text (UTF-8 without control, bidi or zero-width characters, at most 2,000 bytes).",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if spec.From, err = parseInstant("--from", from); err != nil {
				return &exitError{code: 2, err: err}
			}
			if spec.To, err = parseInstant("--to", to); err != nil {
				return &exitError{code: 2, err: err}
			}
			if spec.By == "" {
				spec.By = osUser()
			}
			return m.eventWrite(c, "entered", func(control *pgxpool.Pool, client *river.Client[pgx.Tx]) (event.Event, error) {
				return event.Add(c.Context(), control, client, spec, m.Now())
			})
		},
	}
	add.Flags().StringVar(&spec.Farm, "farm", "", "farm id")
	add.Flags().StringArrayVar(&spec.Turbines, "turbine", nil, "a turbine of the farm (repeat for several; none: every turbine of the farm)")
	add.Flags().StringVar(&from, "from", "", "start, an RFC 3339 instant (2026-08-01T10:00:00Z)")
	add.Flags().StringVar(&to, "to", "", "end (excluded), an RFC 3339 instant")
	add.Flags().StringVar(&spec.Category, "category", "", "availability_category code (requested_shutdown, force_majeure, scheduled_maintenance, …)")
	add.Flags().StringVar(&spec.Note, "note", "", "why (required; kept with who and when)")
	add.Flags().StringVar(&spec.By, "by", "", "who enters it (default: the OS user)")
	for _, f := range []string{"farm", "from", "to", "category", "note"} {
		_ = add.MarkFlagRequired(f)
	}

	var voidBy, voidNote string
	void := &cobra.Command{
		Use:   "void ID --note TEXT [--by NAME]",
		Short: "Void an event (it stays in the trail) and queue the recompute of the farm-days it covered",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var id int64
			if _, err := fmt.Sscan(args[0], &id); err != nil || id <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("ID: want an event number (orchestrator event list shows them), got %q", args[0])}
			}
			if voidBy == "" {
				voidBy = osUser()
			}
			return m.eventWrite(c, "voided", func(control *pgxpool.Pool, client *river.Client[pgx.Tx]) (event.Event, error) {
				return event.Void(c.Context(), control, client, id, voidBy, voidNote, m.Now())
			})
		},
	}
	void.Flags().StringVar(&voidNote, "note", "", "why it is voided (required)")
	void.Flags().StringVar(&voidBy, "by", "", "who voids it (default: the OS user)")
	_ = void.MarkFlagRequired("note")

	var listFarm, listFrom, listTo string
	var listMax int
	list := &cobra.Command{
		Use:   "list [--farm F] [--from INSTANT] [--to INSTANT]",
		Short: "The events overlapping a range (default: the last 31 days), newest first, voided ones too",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			now := m.Now()
			from, to := now.AddDate(0, 0, -31), now.Add(time.Hour)
			var err error
			if listFrom != "" {
				if from, err = parseInstant("--from", listFrom); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			if listTo != "" {
				if to, err = parseInstant("--to", listTo); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			if _, err := m.Migrate(c.Context()); err != nil {
				return err
			}
			control, err := m.Control(c.Context())
			if err != nil {
				return err
			}
			evs, err := event.List(c.Context(), control, listFarm, from, to, listMax)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tFARM\tTURBINES\tFROM\tTO\tCATEGORY\tENTERED\tNOTE\tVOIDED")
			for _, e := range evs {
				turbines := strings.Join(e.Turbines, ",")
				if turbines == "" {
					turbines = "all"
				}
				voided := "-"
				if e.VoidedAt != nil {
					voided = fmt.Sprintf("%s by %s: %s", e.VoidedAt.UTC().Format(time.RFC3339), text.Printable(*e.VoidedBy), text.Printable(*e.VoidNote))
				}
				// An event from before the text rule may hold a tab or an escape sequence.
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s by %s\t%s\t%s\n", e.ID, e.Farm, turbines, e.From.UTC().Format(time.RFC3339),
					e.To.UTC().Format(time.RFC3339), e.Category, e.At.UTC().Format(time.RFC3339), text.Printable(e.By), text.Printable(e.Note), voided)
			}
			if len(evs) == 0 {
				fmt.Fprintln(w, "(none)")
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&listFarm, "farm", "", "farm id (default: every farm)")
	list.Flags().StringVar(&listFrom, "from", "", "range start, an RFC 3339 instant (default: 31 days ago)")
	list.Flags().StringVar(&listTo, "to", "", "range end, an RFC 3339 instant (default: an hour from now)")
	list.Flags().IntVar(&listMax, "max", 1000, "at most this many events")
	cmd.AddCommand(add, void, list)
	return cmd
}

// eventWrite migrates, runs one event write with the control pool and an
// insert-only River client, and prints what it did.
func (m *Main) eventWrite(c *cobra.Command, did string, write func(*pgxpool.Pool, *river.Client[pgx.Tx]) (event.Event, error)) error {
	if _, err := m.Migrate(c.Context()); err != nil {
		return err
	}
	control, err := m.Control(c.Context())
	if err != nil {
		return err
	}
	client, err := jobs.InsertOnlyClient(control)
	if err != nil {
		return err
	}
	e, err := write(control, client)
	if errors.Is(err, event.ErrInvalid) || errors.Is(err, event.ErrNotFound) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	turbines := strings.Join(e.Turbines, ", ")
	if turbines == "" {
		turbines = "every turbine"
	}
	fmt.Printf("%s event %d: %s on %s (%s), %s to %s, by %s: %q\n", did, e.ID, e.Category, e.Farm, turbines,
		e.From.UTC().Format(time.RFC3339), e.To.UTC().Format(time.RFC3339), e.By, e.Note)
	if len(e.Recompute) == 0 {
		fmt.Println("no farm-day it covers has begun: nothing to recompute yet (the days count it when they are computed)")
	} else {
		fmt.Printf("queued the recompute of %d farm-day(s) (%d rollup_day job(s); a running serve or work does them): %s\n",
			len(e.Recompute), e.Jobs, strings.Join(e.Recompute, ", "))
	}
	return nil
}

func parseInstant(flag, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: want an RFC 3339 instant such as 2026-08-01T10:00:00Z, got %q", flag, v)
	}
	return t, nil
}

// osUser is who runs the command, for an audit trail's "by".
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}
