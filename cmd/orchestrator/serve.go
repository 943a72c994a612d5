package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/server"
)

func (m *Main) serveCommand() *cobra.Command {
	addr := os.Getenv("GALEWATCH_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	jobCfg := jobs.DefaultConfig()
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
			go m.refreshRegistry(ctx, in, schedules, 10*time.Second)
			if err := client.Start(ctx); err != nil {
				return err
			}
			defer stopRiver(client)
			srv := server.New(control, shards)
			srv.Handle("POST /v1/readings", ingest.NewHandler(in, maxBody, maxConcurrent))
			if err := mountRiverUI(ctx, srv, client, addr); err != nil {
				return err
			}
			return server.ListenAndServe(ctx, addr, srv, func(a net.Addr) {
				fmt.Printf("serving on http://%s (healthz: /healthz, ingest: POST /v1/readings, jobs: /riverui/)\n", a)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", addr, "listen address ($GALEWATCH_ADDR)")
	cmd.Flags().Int64Var(&maxBody, "max-body", maxBody, "largest ingest body in bytes (413 above)")
	cmd.Flags().IntVar(&maxConcurrent, "max-ingest", maxConcurrent, "ingest bodies processed at once (503 + Retry-After beyond)")
	ingestFlags(cmd, &m.Config.Rules)
	jobFlags(cmd, &jobCfg)
	return cmd
}

// refreshRegistry reloads the registry snapshot ingest validates against
// and registers the nightly rollup of any new farm, so a fleet apply reaches
// a running server within one interval.
func (m *Main) refreshRegistry(ctx context.Context, in *ingest.Ingestor, schedules *jobs.FarmSchedules, every time.Duration) {
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
			if _, err := schedules.Sync(ctx); err != nil {
				slog.Warn("nightly rollup schedules", "err", err)
			}
		}
	}
}

// mountRiverUI serves River's job dashboard at /riverui/. It can cancel,
// retry and delete jobs and has no authentication of its own: with
// GALEWATCH_ADMIN_PASSWORD set it asks for HTTP basic auth (user "admin");
// without it, it is mounted only when serving on a loopback address.
func mountRiverUI(ctx context.Context, srv *server.Server, client *river.Client[pgx.Tx], addr string) error {
	password := os.Getenv("GALEWATCH_ADMIN_PASSWORD")
	if password == "" && !isLoopback(addr) {
		slog.Warn("River UI not mounted: serving on a non-loopback address without GALEWATCH_ADMIN_PASSWORD", "addr", addr)
		return nil
	}
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Prefix:    "/riverui",
	})
	if err != nil {
		return err
	}
	if err := h.Start(ctx); err != nil {
		return err
	}
	var handler http.Handler = h
	if password != "" {
		handler = basicAuth(password, h)
	}
	srv.Handle("/riverui/", handler)
	return nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func basicAuth(password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "admin" || subtle.ConstantTimeCompare([]byte(pass), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="galewatch"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
