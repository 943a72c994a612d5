package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/server"
)

func (m *Main) serveCommand() *cobra.Command {
	addr := os.Getenv("GALEWATCH_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	cfg := ingest.DefaultConfig()
	var maxBody int64 = 64 << 20
	maxConcurrent := 4
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve HTTP (/healthz, POST /v1/readings, ...) until interrupted",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			control, _ := m.Control(ctx)
			shards, _ := m.Shards(ctx)
			in, err := m.Ingestor(ctx, cfg)
			if err != nil {
				return err
			}
			defer in.Close()
			go m.refreshRoutes(ctx, in, 10*time.Second)
			srv := server.New(control, shards)
			srv.Handle("POST /v1/readings", ingest.NewHandler(in, maxBody, maxConcurrent))
			return server.ListenAndServe(ctx, addr, srv, func(a net.Addr) {
				fmt.Printf("serving on http://%s (healthz: /healthz, ingest: POST /v1/readings)\n", a)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", addr, "listen address ($GALEWATCH_ADDR)")
	cmd.Flags().Int64Var(&maxBody, "max-body", maxBody, "largest ingest body in bytes (413 above)")
	cmd.Flags().IntVar(&maxConcurrent, "max-ingest", maxConcurrent, "ingest bodies processed at once (503 + Retry-After beyond)")
	ingestFlags(cmd, &cfg)
	return cmd
}

// refreshRoutes reloads the registry snapshot ingest validates against, so
// a fleet apply reaches a running server within one interval.
func (m *Main) refreshRoutes(ctx context.Context, in *ingest.Ingestor, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			routes, err := ingest.LoadRoutes(ctx, m.control, m.Now())
			if err != nil {
				slog.Warn("refresh turbine routes", "err", err)
				continue
			}
			in.SetRoutes(routes)
		}
	}
}
