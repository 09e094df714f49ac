// Forms of statement a fourth attack on shadow routing (a23, 2026-12-04) found reaching the
// wrong side. Each test fails on the code it was written against: it names the statement and
// where it went (the production general-log line).
package connector_test

import (
	"context"
	"testing"
)

// INSERT … SELECT (and REPLACE … SELECT) from the shadow table into itself: the SELECT reads
// t_order's shadow rows (WHERE user_id = 0, shadow by the select algorithm) while the row it
// inserts gives user_id a production value. The WHERE of the SELECT is not read at all (only
// the inserted row is), so the statement runs on production hot as production traffic, reading
// for shadow rows there; the README refuses a statement whose rows are partly shadow rows
// (ErrMixedShadow). The reverse (shadow values inserted from production's rows, WHERE
// user_id = 7) runs on shadow_hot, reading production rows there.
func TestAttack23InsertSelectFromTheShadowTableReadsShadowRowsOnProduction(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range w.shadows {
		b.Exec(t, "INSERT INTO t_order (id, user_id, note) VALUES (600, 0, 'shadowrow')")
	}
	for _, b := range w.prod {
		b.Exec(t, "INSERT INTO t_order (id, user_id, note) VALUES (500, 7, 'prodrow')")
	}
	w.truncateLogs(t)
	db := w.open(t)
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO t_order (id, user_id, note) SELECT id + 1000, 7, 'a23insel' FROM t_order WHERE user_id = 0",
		"INSERT INTO t_order (id, user_id, note) SELECT MAX(id) + 2000, 7, 'a23insel' FROM t_order WHERE user_id = 0 HAVING COUNT(*) > 0",
		"REPLACE INTO t_order (id, user_id, note) SELECT id, 7, 'a23insel' FROM t_order WHERE user_id = 0",
	} {
		_, err := db.ExecContext(ctx, q)
		t.Logf("%q: err = %v", q, err)
	}
	for _, l := range w.productionLines(t, "a23insel") {
		t.Errorf("a statement reading t_order's shadow rows (user_id = 0) reached production: %s", l)
	}
	q := "INSERT INTO t_order (id, user_id, note) SELECT id + 3000, 0, 'a23inselrev' FROM t_order WHERE user_id = 7"
	_, err := db.ExecContext(ctx, q)
	t.Logf("%q: err = %v", q, err)
	for _, b := range w.shadows {
		for _, e := range b.GeneralLog(t) {
			if e.Text == q {
				t.Errorf("a statement reading t_order's production rows (user_id = 7) reached shadow: %s: %s", b.Name, e.Text)
			}
		}
	}
}
