// Package server is the orchestrator's HTTP face: health, ingest, and (as the
// project grows) the status page, the JSON API and the River UI.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
)

// Server holds what the handlers need.
type Server struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	mux     *http.ServeMux
}

// New builds a Server and its routes.
func New(control *pgxpool.Pool, shards *fleet.Shards) *Server {
	s := &Server{Control: control, Shards: shards, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	return s
}

// Handle adds a route (used to mount ingest, River UI, ...).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type health struct {
	Status  string            `json:"status"`
	Control string            `json:"control"`
	Shards  map[string]string `json:"shards"`
}

// healthz answers 200 while the control database answers (shards are
// reported one by one: a down shard degrades, it does not kill, the service).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	h := health{Status: "ok", Control: "ok", Shards: map[string]string{}}
	code := http.StatusOK
	if err := s.Control.Ping(ctx); err != nil {
		h.Status, h.Control, code = "down", err.Error(), http.StatusServiceUnavailable
	}
	for _, name := range s.Shards.Names() {
		if err := s.Shards.Pool(name).Ping(ctx); err != nil {
			h.Shards[name] = err.Error()
			if h.Status == "ok" {
				h.Status = "degraded"
			}
		} else {
			h.Shards[name] = "ok"
		}
	}
	writeJSON(w, code, h)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// ListenAndServe serves h on addr until ctx ends, then shuts down gracefully.
// ready, if not nil, receives the bound address once listening.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			// Requests still running after the grace period (a slow upload)
			// are cut off, so their ingest ends and the pipeline can close.
			_ = srv.Close()
		}
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
