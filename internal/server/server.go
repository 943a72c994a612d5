// Package server is the orchestrator's HTTP face: health, ingest, the River
// UI, the status page (server-rendered HTML with inline SVG charts) and the
// JSON API under /api/v1/.
//
// It is closed by default: without a token it serves only on a loopback
// address and only to requests addressed to a loopback host name; with a
// token every endpoint but /healthz requires it. Nothing a client sees
// carries a connection string, host or user.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
)

// TokenEnv is the environment variable holding the API token.
const TokenEnv = "GALEWATCH_TOKEN"

// Config is how the server listens and whom it serves.
type Config struct {
	// Addr is the listen address (host:port).
	Addr string
	// Token, when set, is required on every endpoint but /healthz, as
	// `Authorization: Bearer <token>` (or as the password of HTTP basic
	// auth, so a browser can open the River UI). Without it the server
	// refuses to listen on anything but a loopback address. Surrounding
	// whitespace is not part of it (ParseToken); CheckExposure refuses one
	// shorter than MinTokenLen.
	Token string
	// Timeouts of the HTTP server: a client that trickles its request (or
	// reads its response slowly) is cut off instead of holding a
	// connection and an ingest slot forever.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Warranty is the availability the status page draws its threshold
	// line at (a fraction; DefaultWarranty). It frames the charts and
	// defines no stored count, so it is the server's setting (serve
	// --warranty), not a rule of the control database.
	Warranty float64
}

// DefaultWarranty is the availability a turbine supplier's warranty
// commonly guarantees: 97 %.
const DefaultWarranty = 0.97

// DefaultConfig listens on 127.0.0.1:8080. ReadTimeout bounds the whole
// request (a 64 MiB ingest body at 1 MB/s takes about a minute);
// WriteTimeout, counted from the end of the headers, also covers the
// ingest of that body before the answer is written.
func DefaultConfig() Config {
	return Config{
		Addr:              "127.0.0.1:8080",
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		Warranty:          DefaultWarranty,
	}
}

// ErrExposed is returned when the server would listen beyond loopback
// without a token.
var ErrExposed = errors.New("refusing to serve on a non-loopback address without " + TokenEnv)

// MinTokenLen is the fewest characters a token may have (after surrounding
// whitespace is trimmed).
const MinTokenLen = 16

// ErrWeakToken is returned for a token that is set but blank, shorter
// than MinTokenLen or holds a control character. Its message never
// carries the token.
var ErrWeakToken = errors.New("refusing a weak " + TokenEnv)

// ParseToken returns the token a raw setting (an environment variable, a
// secret file's contents) holds: surrounding whitespace, such as a secret
// file's final newline, is trimmed. Empty means no token. A setting that
// is only whitespace, or that leaves fewer than MinTokenLen characters or
// a control character, is refused.
func ParseToken(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	tok := strings.TrimSpace(raw)
	switch {
	case tok == "":
		return "", fmt.Errorf("%w: it is set but holds only whitespace; unset it (loopback only) or give it at least %d characters, e.g. `openssl rand -hex 32`", ErrWeakToken, MinTokenLen)
	case utf8.RuneCountInString(tok) < MinTokenLen:
		return "", fmt.Errorf("%w: shorter than %d characters once surrounding whitespace is trimmed; use a longer secret, e.g. `openssl rand -hex 32`", ErrWeakToken, MinTokenLen)
	case strings.ContainsFunc(tok, unicode.IsControl) || !utf8.ValidString(tok):
		return "", fmt.Errorf("%w: it holds a control character or invalid UTF-8, which no client can send in a header", ErrWeakToken)
	}
	return tok, nil
}

// CheckExposure refuses a token ParseToken refuses, and a non-loopback
// listen address without a token.
func (c Config) CheckExposure() error {
	tok, err := ParseToken(c.Token)
	if err != nil {
		return err
	}
	if tok == "" && !IsLoopback(c.Addr) {
		return fmt.Errorf("%w (%s): set %s to a secret of at least %d characters clients send as `Authorization: Bearer <token>`, or listen on 127.0.0.1", ErrExposed, c.Addr, TokenEnv, MinTokenLen)
	}
	return nil
}

// IsLoopback reports whether a listen address (host:port) binds only
// loopback interfaces. An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopbackHost(host)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server holds what the handlers need.
type Server struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	// Now is the clock: the default month and day range (the farm-local
	// today), freshness and the backlog's age. time.Now unless set.
	Now func() time.Time
	// Demo, when set (serve --demo), is what the demo delivers: the status
	// page shows its story and names the hours it left without a reading.
	Demo *Demo
	cfg  Config
	mux  *http.ServeMux
	log  *slog.Logger
	csrf *http.CrossOriginProtection
}

// New builds a Server and its routes.
func New(control *pgxpool.Pool, shards *fleet.Shards, cfg Config) *Server {
	// The token compared is the trimmed one: a secret file's newline is not part of it.
	cfg.Token = strings.TrimSpace(cfg.Token)
	s := &Server{Control: control, Shards: shards, Now: time.Now, cfg: cfg, mux: http.NewServeMux(), log: slog.Default(), csrf: http.NewCrossOriginProtection()}
	if s.cfg.Warranty == 0 {
		s.cfg.Warranty = DefaultWarranty
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.routeAPI()
	s.routePages()
	return s
}

// Handle adds a route (tests, the River UI). Every route but /healthz is
// behind the server's access rules.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// MountIngest serves POST /v1/readings with in: bodies up to maxBody
// bytes, maxBodies read or waiting at once (503 beyond), read under the server's
// ReadTimeout (the handler's rate rule moves the read deadline the server
// set).
func (s *Server) MountIngest(in *ingest.Ingestor, maxBody int64, maxBodies int) {
	h := ingest.NewHandler(in, maxBody, maxBodies)
	h.ReadTimeout = s.cfg.ReadTimeout
	s.mux.Handle("POST /v1/readings", h)
}

// MountMetrics serves GET /metrics with h.
func (s *Server) MountMetrics(h http.Handler) { s.mux.Handle("GET /metrics", h) }

// ServeHTTP applies the access rules, then routes.
//
// A browser's cross-site POST (or DELETE...) is refused whatever else the
// request carries: the River UI's API takes JSON under any content type, so
// a page elsewhere could otherwise drive it through the loopback rule or a
// browser's cached credentials.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := s.csrf.Check(r); err != nil {
		http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
		return
	}
	if r.URL.Path != "/healthz" && !s.allowed(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

type health struct {
	Status  string            `json:"status"`
	Control string            `json:"control"`
	Shards  map[string]string `json:"shards"`
}

// HealthTimeout bounds /healthz: the control database and every shard are
// pinged at once, each within it, so one server that hangs makes only its
// own entry "down", after this long.
const HealthTimeout = 2 * time.Second

// healthz answers 200 while the control database answers; each shard is
// "ok" or "down" (a down shard degrades, it does not kill, the service).
// The reasons go to the server's log, not to the client.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	names := s.Shards.Names()
	shardErrs := make([]error, len(names))
	var controlErr error
	var wg sync.WaitGroup
	wg.Go(func() { controlErr = s.Control.Ping(ctx) })
	for i, name := range names {
		wg.Go(func() { shardErrs[i] = s.Shards.Pool(name).Ping(ctx) })
	}
	wg.Wait()
	h := health{Status: "ok", Control: "ok", Shards: map[string]string{}}
	code := http.StatusOK
	if controlErr != nil {
		s.log.Warn("healthz: control database", "err", controlErr)
		h.Status, h.Control, code = "down", "down", http.StatusServiceUnavailable
	}
	for i, name := range names {
		if err := shardErrs[i]; err != nil {
			s.log.Warn("healthz: shard", "shard", name, "err", err)
			h.Shards[name] = "down"
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

// ListenAndServe serves h on cfg.Addr until ctx ends, then shuts down
// gracefully. ready, if not nil, receives the bound address once listening.
func ListenAndServe(ctx context.Context, cfg Config, h http.Handler, ready func(net.Addr)) error {
	if err := cfg.CheckExposure(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
	}
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
