package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

func post(t *testing.T, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	testdb.Must(t, err, "request")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	testdb.Must(t, err, "POST %s", url)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTheEventsAPI: POST /api/v1/events enters an event with the token
// (201, the event with the days queued for recompute), refuses without it
// (401), and is refused on a server that has no token at all (403: a
// write that changes a signed number is never anonymous). A bad body is a
// 400 that names the problem — bad JSON, a NUL in the note, a category
// that does not exist — and enters nothing. Voiding answers 200 with who;
// the list shows the event voided.
func TestTheEventsAPI(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, commissioned_at: 2026-07-01T00:00:00Z, turbines: [{id: T-1, shard: s1}]}]\n")
	client, err := jobs.InsertOnlyClient(env.Control)
	testdb.Must(t, err, "river client")
	now := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

	open := server.DefaultConfig()
	s0 := server.New(env.Control, env.Shards, open)
	s0.MountEvents(client)
	url0 := serve(t, s0, open)
	good := `{"farm": "f", "from": "2026-08-01T10:00:00Z", "to": "2026-08-01T14:00:00Z", "category": "force_majeure", "note": "storm Agnes", "entered_by": "ops-anna"}`
	if code, body := post(t, url0+"/api/v1/events", good); code != 403 || !strings.Contains(body, "needs the server's token") {
		t.Fatalf("POST without a configured token: %d %s; want 403", code, body)
	}

	cfg := server.DefaultConfig()
	cfg.Token = testToken
	s := server.New(env.Control, env.Shards, cfg)
	s.Now = func() time.Time { return now }
	s.MountEvents(client)
	url := serve(t, s, cfg)
	auth := []string{"Authorization", "Bearer " + testToken}
	if code, _ := post(t, url+"/api/v1/events", good); code != 401 {
		t.Fatalf("POST without the token: %d; want 401", code)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"farm": "f", "from": "yesterday"`, "not the JSON expected"},
		{strings.Replace(good, "storm Agnes", `storm\u0000Agnes`, 1), `invalid event: note: U+0000 at byte 5 is a control character`},
		{strings.Replace(good, "storm Agnes", `storm \u202eAgnes`, 1), `invalid event: note: U+202E at byte 6 is a bidi control`},
		{strings.Replace(good, "force_majeure", "curtailment", 1), `category: \"curtailment\" is not one of`},
		{strings.Replace(good, `"farm"`, `"farms"`, 1), "unknown field"},
		{good + good, "more than one JSON value"},
	} {
		code, body := post(t, url+"/api/v1/events", tc.body, auth...)
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %s; want 400 saying %s", tc.body, code, body, tc.want)
		}
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM operator_event`); n != 0 {
		t.Fatalf("%d events after bad bodies; want 0", n)
	}

	code, body := post(t, url+"/api/v1/events", good, auth...)
	var ev struct {
		ID        int64    `json:"id"`
		Category  string   `json:"category"`
		By        string   `json:"entered_by"`
		Recompute []string `json:"recompute_days"`
		Jobs      int      `json:"jobs_queued"`
		VoidedBy  *string  `json:"voided_by"`
	}
	if code != 201 || json.Unmarshal([]byte(body), &ev) != nil || ev.ID == 0 || ev.Category != "force_majeure" || ev.By != "ops-anna" ||
		strings.Join(ev.Recompute, ",") != "2026-08-01" || ev.Jobs != 1 {
		t.Fatalf("POST the event: %d %s; want 201, force_majeure by ops-anna, 2026-08-01 queued (1 job)", code, body)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'farm_id' = 'f' AND args->>'day' = '2026-08-01'`); n != 1 {
		t.Fatalf("%d rollup_day jobs for f 2026-08-01; want 1", n)
	}
	if code, body := post(t, url+"/api/v1/events/99999/void", `{"voided_by": "ops-ben", "note": "x"}`, auth...); code != 404 {
		t.Fatalf("void an unknown event: %d %s; want 404", code, body)
	}
	code, body = post(t, url+"/api/v1/events/"+jsonInt(ev.ID)+"/void", `{"voided_by": "ops-ben", "note": "entered twice"}`, auth...)
	if code != 200 || !strings.Contains(body, `"voided_by":"ops-ben"`) {
		t.Fatalf("void: %d %s; want 200 voided by ops-ben", code, body)
	}
	code, body = get(t, url+"/api/v1/events?farm=f&from=2026-08-01T00:00:00Z&to=2026-08-02T00:00:00Z", auth...)
	if code != 200 || !strings.Contains(body, `"void_note":"entered twice"`) || !strings.Contains(body, `"note":"storm Agnes"`) {
		t.Fatalf("GET /api/v1/events: %d %s; want the voided event", code, body)
	}
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }
