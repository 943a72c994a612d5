package jobs_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// steerFleet: three 2 s turbines in UTC, two on s1, one on s2.
const steerFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {id: M-1, shard: s1}
      - {id: M-2, shard: s1}
      - {id: M-3, shard: s2}
`

// steerDeadline catches a pipeline that stopped: the work below takes a
// few seconds when nothing steers it.
const steerDeadline = time.Minute

// tenMinutes is turbine id's 2 s readings of the ten minutes from at.
func tenMinutes(id string, at time.Time) []byte {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		r := at.Add(time.Duration(2*i) * time.Second)
		fmt.Fprintf(&b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
			id, r.Format(time.RFC3339), r.Add(time.Second).Format(time.RFC3339))
	}
	return []byte(b.String())
}

// memberConn logs in to the control database as a new login role that is
// a member of group (dropped when the test ends), as docs/dba.md ("Roles")
// has a DBA create one.
func memberConn(t *testing.T, env *testdb.Env, group string) *pgx.Conn {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	login, password := "gwt_steer_"+hex.EncodeToString(b[:]), "s3cret-"+hex.EncodeToString(b[:])
	testdb.Exec(t, env.Control, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE %s`, login, password, group))
	cfg, err := pgx.ParseConfig(env.ControlDSN)
	testdb.Must(t, err, "dsn")
	cfg.User, cfg.Password = login, password
	cfg.RuntimeParams["statement_timeout"] = "10s"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	testdb.Must(t, err, "log in as %s (member of %s)", login, group)
	t.Cleanup(func() {
		_ = conn.Close(context.Background())
		_, _ = env.Control.Exec(context.Background(), "DROP ROLE IF EXISTS "+login)
	})
	return conn
}

func permissionDenied(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// TestOnlyThePipelineSteersRiver: a login that is a member of
// galewatch_reporting, and one of galewatch_ingest, on the control
// database where River keeps its jobs, try every way River is steered.
// Each may write none of River's tables (every INSERT, UPDATE, DELETE,
// TRUNCATE and nextval refused) and execute none of its functions that
// could change anything. Then, while both send, round after round, every
// control message River obeys — resume and pause of each of the 5 queues
// and "*", cancel of every job in its queue, request_resign and resigned —
// on each of its 3 channels with and without the schema prefix, the
// pipeline works: a publication, a drain and the recomputes it queues, and
// a move of M-1 from s1 to s2 that holds, running, until the logins have
// sent 20 more rounds. Every one of those jobs completes (the 1 August
// rows count 300 readings a turbine, the 09:05 window 90/90, M-1's 600
// readings are on s2 and none on s1), and River's leader, elected before
// the first message, is still the one.
func TestOnlyThePipelineSteersRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	env := testdb.New(t, steerFleet)
	p := pipelinetest.New(t, env, pipelinetest.Options{At: day2.Add(10 * time.Hour), NoStart: true})

	// The move's clock ticks a second a call, past its grace (1 ns) by the
	// next step; it holds at the switch until the logins have sent 20
	// more rounds, or until its job is cancelled.
	var tickMu sync.Mutex
	tick := p.Now()
	p.Mover.Now = func() time.Time { tickMu.Lock(); defer tickMu.Unlock(); tick = tick.Add(time.Second); return tick }
	p.Mover.Grace = time.Nanosecond
	var rounds, perRound atomic.Int64
	roundDone := make(chan struct{}, 1)
	p.Mover.AfterStep = func(ctx context.Context, _ int64, detail string) error {
		if detail != move.Switched {
			return nil
		}
		until := rounds.Load() + 20
		for rounds.Load() < until {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-roundDone:
			}
		}
		return nil
	}

	for _, id := range []string{"M-1", "M-2", "M-3"} {
		pipelinetest.Send(t, p.In, tenMinutes(id, day1.Add(10*time.Hour)))
		pipelinetest.Send(t, p.In, tenMinutes(id, day2.Add(9*time.Hour)))
	}
	p.StartJobs(t)
	deadline := time.Now().Add(steerDeadline)
	leaderQuery := `SELECT leader_id || ' ' || elected_at::text FROM river_leader`
	var leader string
	for leader == "" {
		if time.Now().After(deadline) {
			t.Fatal("River elected no leader")
		}
		if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_leader`); n == 1 {
			leader = testdb.Text(t, env.Control, leaderQuery)
		}
		time.Sleep(10 * time.Millisecond) // polling a row
	}

	logins := map[string]*pgx.Conn{}
	for _, group := range []string{"galewatch_reporting", "galewatch_ingest"} {
		logins[group] = memberConn(t, env, group)
	}

	// River's tables: no write of any kind.
	var tables, sequences []string
	rows, err := env.Control.Query(ctx, `SELECT c.relname, c.relkind = 'S' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relname LIKE 'river\_%' AND c.relkind IN ('r', 'p', 'S') ORDER BY 1`)
	testdb.Must(t, err, "river relations")
	for rows.Next() {
		var name string
		var seq bool
		testdb.Must(t, rows.Scan(&name, &seq), "scan")
		if seq {
			sequences = append(sequences, name)
		} else {
			tables = append(tables, name)
		}
	}
	testdb.Must(t, rows.Err(), "river relations")
	for _, want := range []string{"river_job", "river_leader", "river_queue"} {
		if !strings.Contains(" "+strings.Join(tables, " ")+" ", " "+want+" ") {
			t.Fatalf("River's tables here: %v, want %s among them", tables, want)
		}
	}
	writes := []string{
		`UPDATE river_queue SET paused_at = now()`,
		`UPDATE river_job SET state = 'cancelled', finalized_at = now() WHERE finalized_at IS NULL`,
		`UPDATE river_job SET metadata = metadata || jsonb_build_object('cancel_attempted_at', now())`,
		`DELETE FROM river_job`,
		`DELETE FROM river_leader`,
		`INSERT INTO river_leader (leader_id, elected_at, expires_at) VALUES ('intruder', now(), now() + interval '1 hour')`,
		`INSERT INTO river_queue (name, created_at, metadata, paused_at, updated_at) VALUES ('intruder', now(), '{}', now(), now())`,
	}
	for _, tbl := range tables {
		col := testdb.Text(t, env.Control, `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum = 1`, tbl)
		writes = append(writes, fmt.Sprintf(`INSERT INTO %s DEFAULT VALUES`, tbl), fmt.Sprintf(`UPDATE %s SET %s = %s`, tbl, col, col),
			fmt.Sprintf(`DELETE FROM %s`, tbl), fmt.Sprintf(`TRUNCATE %s`, tbl))
	}
	for _, seq := range sequences {
		writes = append(writes, fmt.Sprintf(`SELECT nextval('%s')`, seq), fmt.Sprintf(`SELECT setval('%s', 1)`, seq))
	}
	// River's functions (its own and the pipeline's river_*): a member may
	// execute only those that cannot change anything (immutable or stable).
	type function struct {
		call     string
		volatile bool
	}
	var functions []function
	rows, err = env.Control.Query(ctx, `SELECT format('SELECT %s(%s)', p.proname,
			(SELECT coalesce(string_agg('NULL::' || format_type(a, NULL), ', '), '') FROM unnest(p.proargtypes) AS a)), p.provolatile = 'v'
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = current_schema() AND p.proname LIKE 'river\_%' AND p.prorettype <> 'trigger'::regtype ORDER BY 1`)
	testdb.Must(t, err, "river functions")
	for rows.Next() {
		var f function
		testdb.Must(t, rows.Scan(&f.call, &f.volatile), "scan")
		functions = append(functions, f)
	}
	testdb.Must(t, rows.Err(), "river functions")
	if len(functions) == 0 {
		t.Fatal("no River function found")
	}
	for group, conn := range logins {
		for _, w := range writes {
			if _, err := conn.Exec(ctx, w); !permissionDenied(err) {
				t.Errorf("%s member: %s: %v, want permission denied", group, w, err)
			}
		}
		for _, f := range functions {
			if _, err := conn.Exec(ctx, f.call); err == nil && f.volatile {
				t.Errorf("%s member may execute %s, which may change River's state", group, f.call)
			} else if err != nil && !permissionDenied(err) {
				t.Errorf("%s member: %s: %v, want permission denied or an answer", group, f.call, err)
			}
		}
	}
	t.Logf("each member refused %d writes to River's %d tables and %d sequences; %d functions tried", len(writes), len(tables), len(sequences), len(functions))
	if t.Failed() {
		t.FailNow()
	}

	// The control messages, round after round, from both logins, until the
	// pipeline's work is done.
	queues := []string{"*", river.QueueDefault, jobs.ControlQueue, jobs.FastQueue, jobs.RollupQueue("s1"), jobs.RollupQueue("s2")}
	var channels []string
	for _, topic := range []string{"river_control", "river_insert", "river_leadership"} {
		channels = append(channels, topic, "public."+topic)
	}
	payload := func(v map[string]any) string {
		b, err := json.Marshal(v)
		testdb.Must(t, err, "payload")
		return string(b)
	}
	stop := make(chan struct{})
	attacked := make(chan error, len(logins))
	for group, conn := range logins {
		go func() {
			for {
				select {
				case <-stop:
					attacked <- nil
					return
				default:
				}
				// Every job River has, with its queue: the logins guess
				// nothing the pipeline's role knows.
				jobRows, err := env.Control.Query(ctx, `SELECT id, queue FROM river_job ORDER BY id`)
				if err != nil {
					attacked <- err
					return
				}
				type job struct {
					ID    int64
					Queue string
				}
				all, err := pgx.CollectRows(jobRows, pgx.RowToStructByPos[job])
				if err != nil {
					attacked <- err
					return
				}
				var msgs []string
				for _, action := range []string{"resume", "pause"} {
					for _, q := range queues {
						msgs = append(msgs, payload(map[string]any{"action": action, "queue": q}))
					}
				}
				for _, j := range all {
					msgs = append(msgs, payload(map[string]any{"action": "cancel", "job_id": j.ID, "queue": j.Queue}))
				}
				msgs = append(msgs, payload(map[string]any{"action": "request_resign"}),
					payload(map[string]any{"action": "resigned", "leader_id": strings.Fields(leader)[0]}))
				var chans, payloads []string
				for _, c := range channels {
					for _, m := range msgs {
						chans, payloads = append(chans, c), append(payloads, m)
					}
				}
				perRound.Store(int64(len(chans)))
				if _, err := conn.Exec(ctx, `SELECT pg_notify(c, m) FROM unnest($1::text[], $2::text[]) AS x(c, m)`, chans, payloads); err != nil {
					attacked <- fmt.Errorf("%s member: notify: %w", group, err)
					return
				}
				rounds.Add(1)
				select {
				case roundDone <- struct{}{}:
				default:
				}
			}
		}()
	}
	stopped := false
	stopAttack := func() {
		if stopped {
			return
		}
		stopped = true
		close(stop)
		for range logins {
			if err := <-attacked; err != nil {
				t.Error(err)
			}
		}
	}
	defer stopAttack()

	// The pipeline's work, meanwhile: a publication (first: the drain's
	// recomputes write final windows, which it would not publish again), a
	// drain, a move.
	waitCtx, cancel := context.WithTimeout(ctx, steerDeadline)
	defer cancel()
	var ids []int64
	for _, args := range []river.JobArgs{jobs.PublishWindowsArgs{}, jobs.DrainDirtyArgs{Immediate: true}} {
		res, err := p.Client.Insert(ctx, args, nil)
		testdb.Must(t, err, "insert %s", args.Kind())
		ids = append(ids, res.Job.ID)
		if _, ok := args.(jobs.PublishWindowsArgs); ok {
			if gaveUp, err := jobs.Wait(waitCtx, p.Client, ids, 50*time.Millisecond, nil); err != nil || len(gaveUp) != 0 {
				t.Fatalf("the publication under the logins' messages: %v, %d gave up; want it completed", err, len(gaveUp))
			}
		}
	}
	reg := *env.Registry
	reg.Now = p.Now
	plan, err := fleet.Parse("moved", strings.NewReader(strings.Replace(steerFleet, "{id: M-1, shard: s1}", "{id: M-1, shard: s2}", 1)))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{OnMoves: func(ctx context.Context, tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
		return jobs.QueueMoves(ctx, p.Client, tx, moves)
	}})
	testdb.Must(t, err, "apply the move")
	if len(res.Moves) != 1 {
		t.Fatalf("apply: moves %+v, want M-1's", res.Moves)
	}
	ids = append(ids, testdb.Int(t, env.Control, `SELECT id FROM river_job WHERE kind = 'move_turbine'`))
	gaveUp, err := jobs.Wait(waitCtx, p.Client, ids, 50*time.Millisecond, nil)
	if err != nil || len(gaveUp) != 0 {
		for _, g := range gaveUp {
			t.Errorf("job %d (%s) gave up: %s", g.Job.ID, g.Job.Kind, g.Reason)
		}
		t.Fatalf("the drain and the move under the logins' messages: %v; want both completed", err)
	}
	// The recomputes the drain and the move queued.
	rollups := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day'`)
	var rollupIDs []int64
	rowsIDs, err := env.Control.Query(ctx, `SELECT id FROM river_job WHERE kind = 'rollup_day'`)
	testdb.Must(t, err, "rollup jobs")
	rollupIDs, err = pgx.CollectRows(rowsIDs, pgx.RowTo[int64])
	testdb.Must(t, err, "rollup jobs")
	if gaveUp, err := jobs.Wait(waitCtx, p.Client, rollupIDs, 50*time.Millisecond, nil); err != nil || len(gaveUp) != 0 || rollups == 0 {
		t.Fatalf("the %d recomputes under the logins' messages: %v, %d gave up; want all completed", rollups, err, len(gaveUp))
	}
	sent := rounds.Load()
	stopAttack()
	if sent < 20 {
		t.Fatalf("the logins sent %d rounds, want at least 20", sent)
	}

	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE state <> 'completed'`); n != 0 {
		t.Errorf("%d River jobs not completed: %s", n, testdb.Text(t, env.Control, `SELECT string_agg(kind || ' ' || state, ', ') FROM river_job WHERE state <> 'completed'`))
	}
	if got := testdb.Text(t, env.Control, `SELECT string_agg(turbine_id || ' ' || received, ', ' ORDER BY turbine_id) FROM turbine_day WHERE day = '2026-08-01'`); got != "M-1 300, M-2 300, M-3 300" {
		t.Errorf("turbine_day on 1 August: %q, want each turbine's 300 readings (the drain's recomputes)", got)
	}
	if got := testdb.Text(t, env.Control, `SELECT expected || '/' || received FROM farm_window WHERE farm_id = 'moor' AND window_start = '2026-08-02 09:05Z' AND path = 'fast'`); got != "90/90" {
		t.Errorf("the 09:05 window published: %s, want 90/90", got)
	}
	if got := testdb.Text(t, env.Control, `SELECT state FROM turbine_move WHERE id = $1`, res.Moves[0].ID); got != move.Done {
		t.Errorf("M-1's move: %s, want done", got)
	}
	if n := testdb.Int(t, env.Shards.Pool("s2"), `SELECT count(*) FROM readings WHERE turbine_id = 'M-1'`); n != 600 {
		t.Errorf("s2 holds %d readings of M-1, want 600", n)
	}
	if n := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'M-1'`); n != 0 {
		t.Errorf("s1 keeps %d readings of M-1, want 0", n)
	}
	if got := testdb.Text(t, env.Control, `SELECT coalesce(string_agg(leader_id || ' ' || elected_at::text, ', '), 'none') FROM river_leader`); got != leader {
		t.Errorf("River's leader after the messages: %s, want %s (elected before them)", got, leader)
	}
	t.Logf("the 2 logins sent %d rounds of up to %d messages each", sent, perRound.Load())
}
