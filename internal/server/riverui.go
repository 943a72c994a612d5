package server

import (
	"context"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"
)

// MountRiverUI serves River's job dashboard at /riverui/. It can cancel,
// retry and delete jobs and has no authentication of its own: it is behind
// the server's access rules (the token, or loopback only).
func (s *Server) MountRiverUI(ctx context.Context, client *river.Client[pgx.Tx]) error {
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
	s.Handle("/riverui/", h)
	return nil
}
