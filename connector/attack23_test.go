// Forms of statement a fourth attack on shadow routing (a23, 2026-12-04) found reaching the
// wrong side. Each test fails on the code it was written against: it names the statement and
// where it went (the production general-log line).
package connector_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
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
		if !errors.Is(err, connector.ErrMixedShadow) || err == nil || !strings.Contains(err.Error(), "production user_id made from shadow rows of t_order") {
			t.Errorf("%q: err = %v, want ErrMixedShadow naming the production rows made from shadow rows", q, err)
		}
	}
	for _, l := range w.productionLines(t, "a23insel") {
		t.Errorf("a statement reading t_order's shadow rows (user_id = 0) reached production: %s", l)
	}
	q := "INSERT INTO t_order (id, user_id, note) SELECT id + 3000, 0, 'a23inselrev' FROM t_order WHERE user_id = 7"
	_, err := db.ExecContext(ctx, q)
	if !errors.Is(err, connector.ErrMixedShadow) || err == nil || !strings.Contains(err.Error(), "shadow user_id made from production rows of t_order") {
		t.Errorf("%q: err = %v, want ErrMixedShadow naming the shadow rows made from production rows", q, err)
	}
	for _, b := range w.shadows {
		for _, e := range b.GeneralLog(t) {
			if e.Text == q {
				t.Errorf("a statement reading t_order's production rows (user_id = 7) reached shadow: %s: %s", b.Name, e.Text)
			}
		}
	}
}

// A DDL statement that changes the shadow column's type, run through obroute in a form other than
// a plain DDL statement — PREPARE … FROM 'ALTER …' then EXECUTE, SET STATEMENT … FOR ALTER
// TABLE …, CALL of a procedure that alters the table —, leaves the definition obroute read before
// in place (only a statement of kind DDL drops it). With user_id changed from VARCHAR(10)
// COLLATE utf8mb4_bin to INT on every backend, INSERT … VALUES (2, '00', …) is still read as the
// string '00' (production), and production hot stores user_id 0: a shadow row on production.
func TestAttack23DefinitionKeptAfterDDLInAnotherFormStoresShadowRowOnProduction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup string // run on every backend directly, after the VARCHAR column
		ddl   []string
	}{
		{"PREPARE", "", []string{
			"PREPARE s FROM 'ALTER TABLE t_order MODIFY user_id INT'", "EXECUTE s",
			"/* shadow */ PREPARE s FROM 'ALTER TABLE t_order MODIFY user_id INT'", "/* shadow */ EXECUTE s"}},
		{"SET STATEMENT", "", []string{
			"SET STATEMENT max_statement_time=100 FOR ALTER TABLE t_order MODIFY user_id INT",
			"/* shadow */ SET STATEMENT max_statement_time=100 FOR ALTER TABLE t_order MODIFY user_id INT"}},
		{"CALL", "CREATE PROCEDURE a23alter() ALTER TABLE t_order MODIFY user_id INT", []string{
			"CALL a23alter()", "/* shadow */ CALL a23alter()"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newShadowWorld(t)
			for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
				b.Exec(t, "ALTER TABLE t_order MODIFY user_id VARCHAR(10) COLLATE utf8mb4_bin")
				if tc.setup != "" {
					b.Exec(t, tc.setup)
				}
			}
			db := w.open(t)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// The first statement on t_order reads its definition on shadow_hot and hot.
			if _, err := conn.ExecContext(ctx, "INSERT INTO t_order (id, user_id, note) VALUES (1, '7', 'a23warm')"); err != nil {
				t.Fatal(err)
			}
			for _, q := range tc.ddl {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Logf("%q: err = %v", q, err)
				}
			}
			q := "INSERT INTO t_order (id, user_id, note) VALUES (2, '00', 'a23stale')"
			_, err = conn.ExecContext(ctx, q)
			t.Logf("%q: err = %v", q, err)
			for _, l := range w.productionLines(t, "a23stale") {
				t.Errorf("the shadow INSERT (user_id '00' into an INT column: 0) reached production: %s", l)
			}
			for _, r := range shadowRows(t, w.prod[0], "t_order") {
				if strings.Split(r, ":")[1] == "0" {
					t.Errorf("production hot holds the shadow row %s of t_order", r)
				}
			}
		})
	}
}

// A DECIMAL UNSIGNED shadow column: obroute reads the column as DECIMAL without its UNSIGNED, so
// a negative value is a production value to it, while MariaDB stores it as 0.00 wherever it does
// not refuse it (INSERT IGNORE, UPDATE of a production row, a session with sql_mode ”) — the
// shadow value. Each statement below ran on production hot and left a row with user_id 0.00
// there (for INT UNSIGNED the same values are refused: ErrUnreadable).
func TestAttack23DecimalUnsignedNegativeStoresShadowRowOnProduction(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
		b.Exec(t, "ALTER TABLE t_order MODIFY user_id DECIMAL(10,2) UNSIGNED")
	}
	w.prod[0].Exec(t, "INSERT INTO t_order (id, user_id, note) VALUES (500, 7, 'prodrow')")
	w.truncateLogs(t)
	db := w.open(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"INSERT IGNORE INTO t_order (id, user_id, note) VALUES (1, -1, 'a23decu')",
		"UPDATE IGNORE t_order SET user_id = -5, note = 'a23decu' WHERE id = 500",
		"SET sql_mode = ''",
		"INSERT INTO t_order (id, user_id, note) VALUES (2, -1, 'a23decu')",
		"INSERT INTO t_order (id, user_id, note) VALUES (3, '-1', 'a23decu')",
	} {
		_, err := conn.ExecContext(ctx, q)
		if strings.HasPrefix(q, "SET") {
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			continue
		}
		// Refused, as for INT UNSIGNED: the value is out of the column's range.
		if !errors.Is(err, connector.ErrUnreadable) || !strings.Contains(err.Error(), "out of the range of the column's type") {
			t.Errorf("%q: err = %v, want ErrUnreadable naming the value out of the column's range", q, err)
		}
	}
	rows, err := w.prod[0].DB.Query("SELECT id, user_id, note FROM t_order WHERE user_id = 0 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var user, note string
		if err := rows.Scan(&id, &user, &note); err != nil {
			t.Fatal(err)
		}
		t.Errorf("production hot holds the shadow row %d:%s:%s of t_order (user_id = 0)", id, user, note)
	}
	for _, l := range w.productionLines(t, "a23decu") {
		t.Errorf("a refused statement reached production: %s", l)
	}
}

// A foreign key of the shadow table with ON UPDATE CASCADE on its shadow column: an UPDATE of the
// parent table (items, no shadow rule: production traffic) that sets the parent's key to the
// shadow value makes the server set t_order.user_id to 0 on production, a shadow row there.
// Every statement ran through obroute: the INSERTs, the two ALTERs (DDL goes to production
// unhinted) and the UPDATE, which ran on production hot. Creating such a constraint through
// obroute is refused (ErrMixedShadow), in either traffic, in ALTER TABLE and in CREATE TABLE; a
// foreign key without a writing action is not.
func TestAttack23ForeignKeyCascadeWritesShadowValueOnProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO items (id, user_id, note) VALUES (1, 7, 'parent')",
		"INSERT INTO t_order (id, user_id, note) VALUES (1, 7, 'child')",
		"ALTER TABLE items ADD INDEX (user_id)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w.truncateLogs(t)
	for _, q := range []string{
		"ALTER TABLE t_order ADD CONSTRAINT a23fk FOREIGN KEY (user_id) REFERENCES items (user_id) ON UPDATE CASCADE",
		"ALTER TABLE t_order ADD CONSTRAINT a23fk FOREIGN KEY (id, user_id) REFERENCES items (id, user_id) ON DELETE SET NULL",
		"/* shadow */ ALTER TABLE t_order ADD FOREIGN KEY a23fk (user_id) REFERENCES items (user_id) ON DELETE RESTRICT ON UPDATE SET DEFAULT",
		"/*+ OBROUTE(shadow=false) */ ALTER TABLE t_order ADD CONSTRAINT a23fk FOREIGN KEY (user_id) REFERENCES items (user_id) ON UPDATE CASCADE",
		"CREATE OR REPLACE TABLE t_order (id INT PRIMARY KEY, user_id INT, note VARCHAR(64), CONSTRAINT a23fk FOREIGN KEY (user_id) REFERENCES items (user_id) ON DELETE CASCADE)",
		"CREATE OR REPLACE TABLE t_order (id INT PRIMARY KEY, user_id INT REFERENCES items (user_id) ON UPDATE CASCADE, note VARCHAR(64) DEFAULT 'a23fk')",
		"EXECUTE IMMEDIATE 'ALTER TABLE t_order ADD CONSTRAINT a23fk FOREIGN KEY (user_id) REFERENCES items (user_id) ON UPDATE CASCADE'",
		"PREPARE a23fk FROM 'ALTER TABLE t_order ADD CONSTRAINT a23fk FOREIGN KEY (user_id) REFERENCES items (user_id) ON UPDATE CASCADE'",
	} {
		_, err := db.ExecContext(ctx, q)
		if !errors.Is(err, connector.ErrMixedShadow) || !strings.Contains(err.Error(), "foreign key of the shadow table t_order on its column user_id") {
			t.Errorf("%q: err = %v, want ErrMixedShadow naming the foreign key on user_id", q, err)
		}
	}
	for _, l := range w.productionLines(t, "a23fk") {
		t.Errorf("a refused foreign key reached production: %s", l)
	}
	// Not refused: no action that writes user_id, or a key without it.
	for _, q := range []string{
		"ALTER TABLE t_order ADD CONSTRAINT a23ok FOREIGN KEY (user_id) REFERENCES items (user_id) ON DELETE RESTRICT",
		"ALTER TABLE t_order ADD CONSTRAINT a23ok2 FOREIGN KEY (id) REFERENCES items (id) ON UPDATE CASCADE",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	q := "UPDATE items SET user_id = 0, note = 'a23fkupd' WHERE id = 1"
	_, err := db.ExecContext(ctx, q)
	t.Logf("%q: err = %v", q, err)
	for _, r := range shadowRows(t, w.prod[0], "t_order") {
		if strings.Split(r, ":")[1] == "0" {
			t.Errorf("production hot holds the shadow row %s of t_order, set by the cascade of %q", r, q)
		}
	}
}

// "--" followed by a digit does not start a comment in MariaDB (a line comment needs a space or
// a control character after "--"): "-1 --1" is -1 - -1 = 0. With a newline after it, obroute
// reads "--1 …" to the end of the line as a comment, user_id as -1, and sends the INSERT to
// production hot, which stores user_id 0 there (without the newline the statement is refused).
func TestAttack23DoubleDashDigitIsNotACommentStoresShadowRowOnProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	q := "INSERT INTO t_order (id, user_id, note) VALUES (1, -1 --1\n, 'a23dash')"
	_, err := db.ExecContext(context.Background(), q)
	t.Logf("%q: err = %v", q, err)
	for _, l := range w.productionLines(t, "a23dash") {
		t.Errorf("the shadow INSERT (user_id -1 - -1 = 0) reached production: %q", l)
	}
	for _, b := range w.prod {
		for _, r := range shadowRows(t, b, "t_order") {
			if strings.Split(r, ":")[1] == "0" {
				t.Errorf("production %s holds the shadow row %s of t_order", b.Name, r)
			}
		}
	}
}

// The same misread hides the rest of a line from obroute: what follows "--0" up to the newline
// is a comment to obroute's parser and code to MariaDB. An UPDATE that joins t_order there, and
// sets its user_id to the shadow value, is read as an UPDATE of items alone: it runs on
// production hot and turns production's t_order row into a shadow row (user_id 0); a SELECT
// that reads t_order's shadow rows in a hidden EXISTS runs on production hot too.
func TestAttack23DoubleDashDigitHidesTheShadowTable(t *testing.T) {
	w := newShadowWorld(t)
	w.prod[0].Exec(t, "INSERT INTO items (id, user_id, note) VALUES (500, 7, 'prodrow')")
	w.prod[0].Exec(t, "INSERT INTO t_order (id, user_id, note) VALUES (500, 7, 'prodrow')")
	w.truncateLogs(t)
	db := w.open(t)
	ctx := context.Background()
	for _, q := range []string{
		"UPDATE items i JOIN items j ON j.id = i.id --0, t_order o\nSET o.user_id = 0, o.note = 'a23hidden' WHERE o.id = i.id",
		"SELECT note FROM items WHERE id = 500 --1 OR EXISTS (SELECT 1 FROM t_order WHERE user_id = 0 AND note <> 'a23hidden')\n",
	} {
		_, err := db.ExecContext(ctx, q)
		t.Logf("%q: err = %v", q, err)
	}
	for _, l := range w.productionLines(t, "a23hidden") {
		t.Errorf("a statement writing or reading t_order's shadow rows reached production: %q", l)
	}
	for _, r := range shadowRows(t, w.prod[0], "t_order") {
		if strings.Split(r, ":")[1] == "0" {
			t.Errorf("production hot holds the shadow row %s of t_order", r)
		}
	}
}
