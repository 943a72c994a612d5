package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
)

func (m *Main) dbCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "db", Short: "Manage the embedded default Postgres cluster"}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "up",
			Short: "Initialise (once) and start the embedded cluster; create the control database",
			RunE: func(c *cobra.Command, _ []string) error {
				url, err := embeddedControlURL(c.Context(), m.Config.Home)
				if err != nil {
					return err
				}
				fmt.Println(url)
				return nil
			},
		},
		&cobra.Command{
			Use:   "down",
			Short: "Stop the embedded cluster (its data stays)",
			RunE: func(c *cobra.Command, _ []string) error {
				return pgserver.New(m.Config.Home).Down(c.Context())
			},
		},
		&cobra.Command{
			Use:   "status",
			Short: "Show whether the embedded cluster is initialised and running",
			RunE: func(c *cobra.Command, _ []string) error {
				s := pgserver.New(m.Config.Home)
				st, err := s.Status(c.Context())
				if err != nil {
					return err
				}
				fmt.Printf("initialised: %v\nrunning:     %v\ndata:        %s\nsocket:      %s\nport:        %d\nbinaries:    %s\npassfile:    %s\n",
					st.Initialised, st.Running, st.DataDir, st.SocketDir, st.Port, st.BinDir, st.PassFile)
				if st.Running {
					fmt.Printf("url:         %s\n", s.URL(pgserver.ControlDatabase))
				}
				return nil
			},
		},
		&cobra.Command{
			Use:   "url",
			Short: "Print the control database URL (DATABASE_URL if set, else the embedded cluster's)",
			RunE: func(c *cobra.Command, _ []string) error {
				if m.Config.DatabaseURL != "" {
					fmt.Println(m.Config.DatabaseURL)
					return nil
				}
				s := pgserver.New(m.Config.Home)
				if s.Port() == 0 {
					return fmt.Errorf("the embedded cluster in %s is not initialised: run `orchestrator db up`", s.Home)
				}
				fmt.Println(s.URL(pgserver.ControlDatabase))
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
			fmt.Printf("migrated: control %d new, river %d new, %d shard(s) up to date\n", res.Goose, res.River, len(m.shards.Names()))
			return nil
		},
	}
}

func (m *Main) fleetCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "fleet", Short: "Fleet registry: shards, farms, turbines"}
	var asJSON bool
	apply := &cobra.Command{
		Use:   "apply FILE.yaml",
		Short: "Validate a fleet file and upsert it into the registry (idempotent)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			plan, err := fleet.ReadFile(args[0])
			if err != nil {
				return err
			}
			prov, err := m.provision(c.Context(), plan, args[0])
			if err != nil {
				return err
			}
			res := *prov.Apply
			if asJSON {
				return json.NewEncoder(os.Stdout).Encode(res)
			}
			fmt.Printf("fleet %s applied: %d shards, %d farms, %d turbines in service (%d retired, %d newly)\n",
				args[0], res.Shards, res.Farms, res.Turbines, res.Retired, res.NewlyRetired)
			for _, c := range res.RuleChanges {
				fmt.Printf("farm %s: rules changed: %s. %s\n", c.FarmID, strings.Join(c.From.Changes(c.To), ", "), c.Consequence())
			}
			return nil
		},
	}
	apply.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.AddCommand(apply)
	return cmd
}
