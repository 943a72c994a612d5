package main

import (
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/server"
)

func (m *Main) serveCommand() *cobra.Command {
	addr := os.Getenv("GALEWATCH_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve HTTP (/healthz, ingest, ...) until interrupted",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			control, _ := m.Control(ctx)
			shards, _ := m.Shards(ctx)
			srv := server.New(control, shards)
			return server.ListenAndServe(ctx, addr, srv, func(a net.Addr) {
				fmt.Printf("serving on http://%s (healthz: /healthz)\n", a)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", addr, "listen address ($GALEWATCH_ADDR)")
	return cmd
}
