package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/event"
)

// maxEventBody bounds an event's JSON: a note and a list of turbines.
const maxEventBody = 1 << 20

// MountEvents serves operator events (internal/event): GET /api/v1/events
// lists them; POST /api/v1/events enters one and POST
// /api/v1/events/{id}/void voids one, each queueing the recompute of the
// days it touches through client. The writes change what a signed number
// says, so they need the token even on loopback: a server without one
// answers them 403 (the CLI, `orchestrator event`, works without).
func (s *Server) MountEvents(client *river.Client[pgx.Tx]) {
	s.mux.HandleFunc("GET /api/v1/events", s.apiEvents)
	s.mux.HandleFunc("POST /api/v1/events", func(w http.ResponseWriter, r *http.Request) { s.apiEventWrite(w, r, client, 0) })
	s.mux.HandleFunc("POST /api/v1/events/{id}/void", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			s.apiError(w, r, badParam("id", "not an event id: %q", r.PathValue("id")))
			return
		}
		s.apiEventWrite(w, r, client, id)
	})
}

// apiEvents lists events overlapping [from, to) (default: the last 31
// days), of ?farm= or every farm, newest first, at most 1,000.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	now := s.Now()
	from, to := now.AddDate(0, 0, -31), now.Add(time.Hour)
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := r.URL.Query().Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				s.apiError(w, r, badParam(p.name, "want an RFC 3339 instant (2026-08-01T00:00:00Z), got %q", v))
				return
			}
			*p.t = t
		}
	}
	list, err := event.List(r.Context(), s.Control, r.URL.Query().Get("farm"), from, to, 1000)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": list})
}

// voidBody is what POST /api/v1/events/{id}/void reads.
type voidBody struct {
	By   string `json:"voided_by"`
	Note string `json:"note"`
}

// apiEventWrite enters (id 0) or voids event id from the request's JSON.
func (s *Server) apiEventWrite(w http.ResponseWriter, r *http.Request, client *river.Client[pgx.Tx], id int64) {
	if s.cfg.Token == "" {
		writeJSON(w, http.StatusForbidden, apiError{Error: "entering or voiding an operator event needs the server's token (" + TokenEnv + "); without one use `orchestrator event`"})
		return
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxEventBody))
	dec.DisallowUnknownFields()
	var (
		ev  event.Event
		err error
	)
	if id == 0 {
		var spec event.Spec
		if err := decodeOne(dec, &spec); err != nil {
			s.apiError(w, r, badParam("body", "%v (want {\"farm\", \"turbines\", \"from\", \"to\", \"category\", \"note\", \"entered_by\"})", err))
			return
		}
		ev, err = event.Add(r.Context(), s.Control, client, spec, s.Now())
	} else {
		var v voidBody
		if err := decodeOne(dec, &v); err != nil {
			s.apiError(w, r, badParam("body", "%v (want {\"voided_by\", \"note\"})", err))
			return
		}
		ev, err = event.Void(r.Context(), s.Control, client, id, v.By, v.Note, s.Now())
	}
	switch {
	case errors.Is(err, event.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error(), Parameter: "body"})
	case errors.Is(err, event.ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error(), Parameter: "id"})
	case err != nil:
		s.apiError(w, r, err)
	case id == 0:
		writeJSON(w, http.StatusCreated, ev)
	default:
		writeJSON(w, http.StatusOK, ev)
	}
}

// decodeOne reads exactly one JSON value.
func decodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not the JSON expected: %w", err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}
