package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/metrics"
	"github.com/galewatch/galewatch/internal/server"
)

func (m *Main) serveCommand() *cobra.Command {
	srvCfg := server.DefaultConfig()
	if addr := os.Getenv("GALEWATCH_ADDR"); addr != "" {
		srvCfg.Addr = addr
	}
	jobCfg := jobs.DefaultConfig()
	var maxBody int64 = 64 << 20
	maxBodies, maxIngest := ingest.DefaultMaxBodies, 0
	warrantyPct := server.DefaultWarranty * 100
	var demoOpts *demoOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve HTTP (status page, /api/v1, /healthz, POST /v1/readings, /riverui/) until interrupted",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			token, err := server.ParseToken(os.Getenv(server.TokenEnv))
			if err != nil {
				return err
			}
			srvCfg.Token = token
			if warrantyPct <= 0 || warrantyPct > 100 {
				return fmt.Errorf("--warranty %v: want a percentage above 0 and at most 100", warrantyPct)
			}
			srvCfg.Warranty = warrantyPct / 100
			// Refuse an exposed address before touching anything.
			if err := srvCfg.CheckExposure(); err != nil {
				return err
			}
			if err := demoOpts.check(); err != nil {
				return err
			}
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			control, _ := m.Control(ctx)
			shards, _ := m.Shards(ctx)
			met := metrics.New(control, shards, m.Now, metrics.DefaultTimeout)
			m.Config.Ingest.Observer, jobCfg.Observer = met.Ingest(), met.Jobs()
			// serve's live bodies hold every process's replays back while
			// they wait (internal/livefirst)
			if m.Config.Ingest.LiveSignals, err = m.LiveSignals(ctx); err != nil {
				return err
			}
			if maxIngest > 0 {
				maxBodies = 16 * maxIngest
			}
			in, err := m.Ingestor(ctx)
			if err != nil {
				return err
			}
			defer in.Close()
			client, err := m.River(ctx, jobCfg)
			if err != nil {
				return err
			}
			schedules, err := m.farmSchedules(ctx, jobCfg, client)
			if err != nil {
				return err
			}
			// A fleet apply reaches a running server within ten seconds:
			// its turbines (and rules) for ingest, its farms' nightly rollups.
			go in.KeepRoutes(ctx, m.control, m.Now, m.Config.RetentionDays, 10*time.Second)
			go schedules.Run(ctx, 10*time.Second)
			stop, err := jobs.Start(ctx, control, client, nil)
			if err != nil {
				return err
			}
			defer stop()
			srv, err := m.httpServer(ctx, srvCfg, in, client, met.Handler(), maxBody, maxBodies)
			if err != nil {
				return err
			}
			story, err := m.newDemo(ctx, demoOpts, in)
			if err != nil {
				return err
			}
			srv.Demo = story.note()
			defer story.wait(ctx) // it stops with ctx, before the pipeline it feeds
			return server.ListenAndServe(ctx, srvCfg, srv, func(a net.Addr) {
				fmt.Printf("serving on http://%s (status page: /, API: /api/v1/farms, healthz: /healthz, readyz: /readyz, metrics: /metrics, ingest: POST /v1/readings, jobs: /riverui/)\n", a)
				story.tell(ctx, a)
			})
		},
	}
	cmd.Flags().StringVar(&srvCfg.Addr, "addr", srvCfg.Addr, "listen address ($GALEWATCH_ADDR); beyond loopback only with $GALEWATCH_TOKEN")
	cmd.Flags().Int64Var(&maxBody, "max-body", maxBody, "largest ingest body in bytes (413 above)")
	cmd.Flags().IntVar(&maxBodies, "max-bodies", maxBodies, "ingest bodies read or waiting at once (503 + Retry-After beyond; one address a quarter of them)")
	cmd.Flags().IntVar(&maxIngest, "max-ingest", 0, "N: --max-bodies 16×N")
	_ = cmd.Flags().MarkDeprecated("max-ingest", "use --max-bodies (16 × N): bodies are admitted by the rows queued for their shards, not by a count")
	cmd.Flags().Float64Var(&warrantyPct, "warranty", warrantyPct, "availability (%) the status page draws its warranty line at")
	jobFlags(cmd, &jobCfg)
	demoOpts = addDemoFlags(cmd)
	return cmd
}

// httpServer builds what serve serves: the status page and API, health,
// readiness, ingest, metrics (when given) and the River UI, on the clock
// m.Now.
func (m *Main) httpServer(ctx context.Context, cfg server.Config, in *ingest.Ingestor, client *river.Client[pgx.Tx], metrics http.Handler, maxBody int64, maxBodies int) (*server.Server, error) {
	control, err := m.Control(ctx)
	if err != nil {
		return nil, err
	}
	shards, err := m.Shards(ctx)
	if err != nil {
		return nil, err
	}
	srv := server.New(control, shards, cfg)
	srv.Now = m.Now
	srv.MountIngest(in, maxBody, maxBodies)
	srv.MountEvents(client)
	if metrics != nil {
		srv.MountMetrics(metrics)
	}
	if err := srv.MountRiverUI(ctx, client); err != nil {
		return nil, err
	}
	return srv, nil
}
