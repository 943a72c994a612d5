package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
)

func (m *Main) dbCommand() *cobra.Command {
	var serverName string
	var all bool
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage the embedded default Postgres cluster (--server NAME: a named one beside it, e.g. a shard's)",
		Long: "The embedded default is one cluster in $GALEWATCH_HOME/pg. --server NAME manages another one, in\n" +
			"$GALEWATCH_HOME/servers/NAME, with its own postmaster, port, socket and password file: a shard's\n" +
			"own server, as production runs them. `db up --server s2` creates the database galewatch_s2 on it and\n" +
			"prints its URL, the dsn to give shard s2 in a fleet file.",
	}
	cmd.PersistentFlags().StringVar(&serverName, "server", "", "a named cluster beside the default one (e.g. a shard's server)")
	// server is the cluster the command is about, and the database whose
	// URL it prints.
	server := func() (*pgserver.Server, string, error) {
		if serverName == "" {
			return pgserver.New(m.Config.Home), pgserver.ControlDatabase, nil
		}
		if err := pgserver.CheckServerName(serverName); err != nil {
			return nil, "", err
		}
		return pgserver.Named(m.Config.Home, serverName), pgserver.ControlDatabase + "_" + serverName, nil
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the embedded cluster (its data stays); --all stops the named ones too",
		RunE: func(c *cobra.Command, _ []string) error {
			if !all {
				s, _, err := server()
				if err != nil {
					return err
				}
				return s.Down(c.Context())
			}
			// make test's own home (TestHome) is this clone's too.
			var errs []error
			for _, home := range []string{m.Config.Home, pgserver.TestHome(m.Config.Home)} {
				names, err := pgserver.ServerNames(home)
				if err != nil {
					return err
				}
				errs = append(errs, pgserver.New(home).Down(c.Context()))
				for _, name := range names {
					if err := pgserver.Named(home, name).Down(c.Context()); err != nil {
						errs = append(errs, fmt.Errorf("server %s: %w", name, err))
					}
				}
			}
			return errors.Join(errs...)
		},
	}
	down.Flags().BoolVar(&all, "all", false, "stop the default cluster, every named one, and make test's (in HOME/test)")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "up",
			Short: "Initialise (once) and start the embedded cluster; create its database and print its URL",
			RunE: func(c *cobra.Command, _ []string) error {
				s, db, err := server()
				if err != nil {
					return err
				}
				url, err := embeddedURL(c.Context(), s, db)
				if err != nil {
					return err
				}
				fmt.Println(url)
				return nil
			},
		},
		down,
		&cobra.Command{
			Use:   "status",
			Short: "Show whether the embedded cluster is initialised and running",
			RunE: func(c *cobra.Command, _ []string) error {
				s, db, err := server()
				if err != nil {
					return err
				}
				st, err := s.Status(c.Context())
				if err != nil {
					return err
				}
				fmt.Printf("initialised: %v\nrunning:     %v\ndata:        %s\nsocket:      %s\nport:        %d\nbinaries:    %s\npassfile:    %s\n",
					st.Initialised, st.Running, st.DataDir, st.SocketDir, st.Port, st.BinDir, st.PassFile)
				if st.Running {
					fmt.Printf("url:         %s\n", s.URL(db))
				}
				if serverName == "" {
					if names, err := pgserver.ServerNames(m.Config.Home); err == nil && len(names) > 0 {
						fmt.Printf("servers:     %s (db status --server NAME)\n", strings.Join(names, " "))
					}
				}
				return nil
			},
		},
		&cobra.Command{
			Use:   "url",
			Short: "Print the control database URL (DATABASE_URL if set, else the embedded cluster's); with --server, that server's database",
			RunE: func(c *cobra.Command, _ []string) error {
				if m.Config.DatabaseURL != "" && serverName == "" {
					fmt.Println(m.Config.DatabaseURL)
					return nil
				}
				s, db, err := server()
				if err != nil {
					return err
				}
				if s.Port() == 0 {
					up := "orchestrator db up"
					if serverName != "" {
						up += " --server " + serverName
					}
					return fmt.Errorf("the embedded cluster in %s is not initialised: run `%s`", s.Home, up)
				}
				fmt.Println(s.URL(db))
				return nil
			},
		},
	)
	return cmd
}

func (m *Main) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply control, River and shard migrations (idempotent, safe to run concurrently)",
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := m.Migrate(c.Context())
			if err != nil {
				return err
			}
			if len(m.unreachable) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d shard(s) not migrated: they do not answer", len(m.unreachable))}
			}
			fmt.Printf("migrated: control %d new, river %d new, %d shard(s) up to date\n", res.Goose, res.River, len(m.shards.Names()))
			return nil
		},
	}
}

func (m *Main) fleetCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "fleet", Short: "Fleet registry: shards, farms, turbines, and what it said when"}
	var asJSON, reopen, repoint, retireMissing, dryRun bool
	var effective string
	apply := &cobra.Command{
		Use:   "apply FILE.yaml [--dry-run] [--effective-from INSTANT] [--reopen] [--retire-missing] [--repoint-shards]",
		Short: "Validate a fleet file, print its plan, and write it into the registry as new versions from an instant (idempotent)",
		Long: "Prints the plan — the farms and turbines added, changed, moved and retired, each with the rolled-up\n" +
			"days it changes — and writes it as new versions from --effective-from (default now; never in the\n" +
			"future, nor before 1900: the zero instant is refused, not taken for now): a turbine's cadence or\n" +
			"service interval from that instant, a farm's zone and rules from the farm-local day holding it. A\n" +
			"turbine or farm new to the registry is in service from it unless its entry gives commissioned_at.\n" +
			"--dry-run prints the plan and changes nothing (no row, no job, no shard database); it exits as the apply\n" +
			"would: 2 when the apply would be refused.\n" +
			"Refused (exit 2, nothing changed): a farm or turbine in service that the file does not name would be\n" +
			"retired, unless --retire-missing (retiring one on purpose: give it decommissioned_at in the file);\n" +
			"a change would alter a farm-day already rolled up, unless --reopen, which applies it and queues\n" +
			"those days for recompute.\n" +
			"A turbine given another shard is moved there online (a move_turbine job; fleet moves shows it).\n" +
			"A known shard's dsn naming another server or database is refused unless --repoint-shards: an apply\n" +
			"copies no shard's data.",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts := fleet.ApplyOptions{Reopen: reopen, RetireMissing: retireMissing, RepointShards: repoint, OnMoves: m.queueMoves}
			// Whether it was given is the flag's own: a parsed zero time is
			// an instant (refused), never "unset".
			if c.Flags().Changed("effective-from") {
				at, err := time.Parse(time.RFC3339, effective)
				if err != nil {
					return fmt.Errorf("--effective-from: %w (give an instant such as 2026-12-01T00:00:00Z)", err)
				}
				if err := fleet.CheckEffectiveFrom(at); err != nil {
					return &exitError{code: 2, err: err}
				}
				opts.EffectiveFrom = &at
			}
			plan, err := fleet.ReadFile(args[0])
			if err != nil {
				return err
			}
			if dryRun {
				return m.fleetDryRun(c.Context(), args[0], plan, opts, asJSON)
			}
			prov, err := m.provisionWith(c.Context(), plan, args[0], opts)
			if err != nil {
				return err
			}
			res := *prov.Apply
			var jobs []int64
			if len(res.Reopened) > 0 {
				if jobs, err = m.reopen(c.Context(), res.Reopened); err != nil {
					return fmt.Errorf("the registry is applied, but queueing the reopened days failed: %w; run orchestrator rollup for them", err)
				}
			}
			if asJSON {
				return json.NewEncoder(os.Stdout).Encode(res)
			}
			// The plan, as --dry-run printed it; then what only the apply knows.
			fmt.Print(res.PlanText())
			fmt.Printf("applied: %d shards, %d farms, %d turbines in the file, %d retired from it (%d by this apply)\n",
				res.Shards, res.Farms, res.Turbines, res.Retired, res.NewlyRetired)
			for _, mv := range res.Moves {
				fmt.Printf("turbine %s: shard %s → %s: move %d queued; its readings are copied while they keep arriving, then ingest switches (a running serve or work does it; orchestrator fleet moves shows how far)\n",
					mv.TurbineID, mv.From, mv.To, mv.ID)
			}
			for _, mv := range res.Resumed {
				fmt.Printf("turbine %s: shard %s → %s: move %d had no job working it; one is queued and goes on from the step the move committed (orchestrator fleet moves shows how far)\n",
					mv.TurbineID, mv.From, mv.To, mv.ID)
			}
			if len(res.Reopened) > 0 {
				fmt.Printf("reopened %d farm-day(s) for recompute (%d rollup_day job(s) queued; a running serve or work runs them)\n", len(res.Reopened), len(jobs))
			}
			return nil
		},
	}
	apply.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	apply.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and change nothing; exit 2 if the apply would be refused")
	apply.Flags().StringVar(&effective, "effective-from", "", "instant the new versions start (RFC 3339, 1900 or later; default now)")
	apply.Flags().BoolVar(&reopen, "reopen", false, "apply even if it changes farm-days already rolled up, and queue them for recompute")
	apply.Flags().BoolVar(&retireMissing, "retire-missing", false, "retire the farms and turbines in service that the file does not name (without it such an apply is refused)")
	apply.Flags().BoolVar(&repoint, "repoint-shards", false, "apply even if a known shard's dsn now names another server or database (you copied its database there; serve and work stopped)")
	cmd.AddCommand(apply, m.fleetHistoryCommand(), m.fleetMovesCommand())
	return cmd
}
