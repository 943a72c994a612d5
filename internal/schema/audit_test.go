package schema_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAuditTrailsRefuseDeleteEditTruncate: the owner of operator_event and
// farm_day_acceptance (the role that migrated them) is refused, each with
// its trigger's message, a TRUNCATE of either (and of farm with CASCADE,
// which reaches both), a DELETE, and an UPDATE other than an event's first
// void; the void itself is stored, and so are both rows, one each, at the
// end. A superuser's session_replication_role = replica skips none of it.
func TestAuditTrailsRefuseDeleteEditTruncate(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}]
farms:
  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}
`)
	ctx := context.Background()
	pool := env.Control
	if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_tables WHERE tablename IN ('operator_event', 'farm_day_acceptance') AND tableowner = current_user`); n != 2 {
		t.Fatalf("the test's role owns %d of the two tables, want 2", n)
	}
	// docs/dba.md's look at the triggers: four, each firing always.
	if n := testdb.Int(t, pool, `SELECT count(*) FILTER (WHERE tgenabled = 'A') FROM pg_trigger WHERE tgname IN ('operator_event_guard', 'operator_event_no_truncate', 'farm_day_acceptance_guard', 'farm_day_acceptance_no_truncate')`); n != 4 {
		t.Fatalf("%d of the trails' four guard triggers enabled always, want 4", n)
	}
	q := controldb.New(pool)
	at := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	ev, err := q.OperatorEventInsert(ctx, controldb.OperatorEventInsertParams{FarmID: "f1", TurbineIds: []string{}, FromAt: at, ToAt: at.Add(time.Hour),
		CategoryID: 2, Note: "grid work", EnteredBy: "ops-anna", EnteredAt: at})
	testdb.Must(t, err, "enter an event")
	acc := testdb.Int(t, pool, `INSERT INTO farm_day_acceptance (farm_id, day, expected, received, note) VALUES ('f1', '2026-08-01', 144, 100, 'link down') RETURNING id`)

	refused := func(stmt, want string) {
		t.Helper()
		_, err := pool.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want refused with %q", stmt, err, want)
		}
	}
	refused(`TRUNCATE operator_event`, "operator_event is an audit trail: never truncated")
	refused(`TRUNCATE farm_day_acceptance`, "farm_day_acceptance is an audit trail: never truncated")
	refused(`TRUNCATE farm CASCADE`, "is an audit trail: never truncated")
	refused(`DELETE FROM operator_event`, fmt.Sprintf("operator_event %d is never deleted: void it", ev))
	refused(`DELETE FROM farm_day_acceptance`, fmt.Sprintf("farm_day_acceptance %d is never deleted", acc))
	refused(`UPDATE farm_day_acceptance SET note = 'edited'`, fmt.Sprintf("farm_day_acceptance %d is never edited", acc))
	refused(`UPDATE farm_day_acceptance SET received = received`, fmt.Sprintf("farm_day_acceptance %d is never edited", acc))
	refused(`UPDATE operator_event SET note = 'edited'`, fmt.Sprintf("operator_event %d is never edited", ev))

	// The void is what operator_event allows, once.
	by, note := "ops-ben", "wrong farm"
	if id, err := q.OperatorEventVoid(ctx, controldb.OperatorEventVoidParams{VoidedBy: &by, VoidedAt: &at, VoidNote: &note, ID: ev}); err != nil || id != ev {
		t.Fatalf("void event %d: %d, %v; want it voided", ev, id, err)
	}
	refused(`UPDATE operator_event SET void_note = 'again'`, "is already voided")

	if testdb.Int(t, pool, `SELECT count(*) FROM pg_roles WHERE rolname = current_user AND rolsuper`) == 1 {
		conn, err := pool.Acquire(ctx)
		testdb.Must(t, err, "acquire")
		_, err = conn.Exec(ctx, `SET session_replication_role = replica`)
		testdb.Must(t, err, "replica role")
		for _, stmt := range []string{`TRUNCATE operator_event`, `TRUNCATE farm_day_acceptance`, `DELETE FROM operator_event`, `DELETE FROM farm_day_acceptance`} {
			if _, err := conn.Exec(ctx, stmt); err == nil {
				t.Errorf("%s with session_replication_role = replica: done, want refused", stmt)
			}
		}
		_, err = conn.Exec(ctx, `RESET session_replication_role`)
		testdb.Must(t, err, "reset")
		conn.Release()
	}

	if n := testdb.Int(t, pool, `SELECT count(*) FROM operator_event WHERE voided_by = 'ops-ben' AND note = 'grid work'`); n != 1 {
		t.Fatalf("%d voided events as entered, want 1", n)
	}
	if n := testdb.Int(t, pool, `SELECT count(*) FROM farm_day_acceptance WHERE note = 'link down'`); n != 1 {
		t.Fatalf("%d acceptances as entered, want 1", n)
	}
}
