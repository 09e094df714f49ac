package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// shadowHintForms are the ways of writing the shadow hint in a leading comment, as MariaDB's
// optimizer-hint grammar and ShardingSphere's comment read them.
var shadowHintForms = []string{
	"/* shadow */ ",
	"/*SHADOW*/",
	"/*\n\tShadow\n*/\n",
	"/*+ OBROUTE(shadow=true) */ ",
	"/*+obroute(SHADOW=TRUE)*/",
	"/*+ MAX_EXECUTION_TIME(1000) OBROUTE (shadow=true) */ ",
	"/*+ OBROUTE(shadow=true) MAX_EXECUTION_TIME(1000) */ ",
	"/*+\n  NO_ICP(t1)\n\tObRoute\n(\n shadow = true ,\n query_level = L1\n)\n  QB_NAME(q1)\n*/\n",
	"/*+ OBROUTE(query_level=L1) OBROUTE(shadow=true) */ ",
	"/* SHARDINGSPHERE_HINT: SHADOW=true */ ",
	"/* ShardingSphere hint: shadow=TRUE */ ",
	"/*\n SHARDINGSPHERE_HINT :\n  SHADOW = true\n*/ ",
	"/* request_id=42 */ /* shadow */ ",
	"-- note\n/*+ NO_ICP(t1) */ /* shadow */ ",
}

// refusedHintForms name the shadow hint in a way obroute cannot read: each is refused, never
// run (as production traffic or any other).
var refusedHintForms = []struct {
	prefix, insertAfterKeyword string
	err                        error
}{
	{prefix: "/*+ MAX_EXECUTION_TIME(1000), OBROUTE(shadow=true) */ ", err: hint.ErrMalformedHint},
	{prefix: "/*+ OBROUTE shadow=true */ ", err: hint.ErrMalformedHint},
	{prefix: "/*+ OBROUTE(shadow=yes) */ ", err: hint.ErrMalformedHint},
	{prefix: "/*+ OBROUTER(shadow=true) */ ", err: hint.ErrUnknownHint},
	{prefix: "/*+ SHADOW */ ", err: hint.ErrMalformedHint},
	{prefix: "/* OBROUTE(shadow=true) */ ", err: hint.ErrMalformedHint},
	{prefix: "/* shadow traffic */ ", err: hint.ErrMalformedHint},
	{prefix: "/* shadow: true */ ", err: hint.ErrMalformedHint},
	{prefix: "-- /* shadow */\n", err: hint.ErrMalformedHint},
	{prefix: "# shadow\n", err: hint.ErrMalformedHint},
	{prefix: "/* SHARDINGSPHERE_HINT: SHADOW=true, WRITE_ROUTE_ONLY=true */ ", err: hint.ErrUnknownHint},
	{insertAfterKeyword: "/*+ OBROUTE(shadow=true) */", err: hint.ErrMalformedHint},
	{insertAfterKeyword: "/* shadow */", err: hint.ErrMalformedHint},
}

// Every spelling of the shadow hint the grammars allow sends the statement to shadow only, and
// every one obroute cannot read is refused: counted on the production servers' general logs,
// nothing of them reaches production.
func TestShadowHintFormsNeverReachProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	id := 0
	for _, form := range shadowHintForms {
		id++
		q := fmt.Sprintf("%sINSERT INTO items (id, user_id, note) VALUES (%d, 1, 'hintform-%d')", form, id, id)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		var note string
		if err := db.QueryRowContext(ctx, fmt.Sprintf("%sSELECT note FROM items WHERE id = %d /* hintform-read */", form, id)).Scan(&note); err != nil || note != fmt.Sprintf("hintform-%d", id) {
			t.Errorf("%q read back %q, %v; want the shadow row", form, note, err)
		}
	}
	for _, f := range refusedHintForms {
		id++
		q := fmt.Sprintf("%sINSERT%s INTO items (id, user_id, note) VALUES (%d, 1, 'hintform-%d')", f.prefix, " "+f.insertAfterKeyword, id, id)
		if _, err := db.ExecContext(ctx, q); !errors.Is(err, f.err) {
			t.Errorf("%q: err = %v, want %v", q, err, f.err)
		}
	}
	if lines := w.productionLines(t, "hintform-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a hinted statement, first: %s", len(lines), lines[0])
	}
	got := shadowRows(t, w.shadows[0], "items")
	if len(got) != len(shadowHintForms) {
		t.Errorf("shadow_hot holds %d items rows, want the %d hinted inserts: %v", len(got), len(shadowHintForms), got)
	}
	for _, b := range w.prod {
		if rows := shadowRows(t, b, "items"); len(rows) != 0 {
			t.Errorf("production %s holds items rows %v", b.Name, rows)
		}
	}
}

// shadowValueStatements are statements whose rows hold the shadow value user_id = 0 however it
// is written; %d is a fresh id.
var shadowValueStatements = []string{
	"INSERT INTO %[1]s VALUES (%[2]d, 0, 'val-%[2]d')",
	"INSERT INTO %[1]s VALUES (%[2]d, '0', 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0.0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0e0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, -0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, +0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0x0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, b'0', 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 1 - 1, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0.4, 'val-%[2]d')",
	"INSERT INTO %[1]s (note, user_id, id) VALUES ('val-%[2]d', ' 0', %[2]d)",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0, 'val-%[2]d'), (%[2]d + 100000, '0', 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) SELECT %[2]d, 0, 'val-%[2]d'",
	"REPLACE INTO %[1]s VALUES (%[2]d, 0, 'val-%[2]d')",
	"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0, 'val-%[2]d') ON DUPLICATE KEY UPDATE note = 'val-%[2]d', user_id = VALUES(user_id)",
	"UPDATE %[1]s SET note = 'val-%[2]d' WHERE 0 = user_id AND id = %[2]d",
	"UPDATE %[1]s SET note = 'val-%[2]d' WHERE user_id IN (0) AND id < 0",
	"UPDATE %[1]s SET note = 'val-%[2]d' WHERE (user_id = 0 OR user_id = -0) AND id < 0",
	"UPDATE %[1]s SET note = 'val-%[2]d', user_id = 0 WHERE NOT (user_id <> 0) AND id < 0",
	"DELETE FROM %[1]s WHERE user_id = '0' AND id = -%[2]d",
	"DELETE FROM %[1]s WHERE user_id <=> 0 AND id = -%[2]d",
	"SELECT note FROM %[1]s WHERE user_id = 0e0 AND id = %[2]d /* val-%[2]d */",
	"SELECT o.note FROM %[1]s o JOIN items i ON i.id = o.id WHERE o.user_id = 0 /* val-%[2]d */",
}

// mixedValueStatements write or reach rows of both traffics, or give values obroute cannot read:
// each is refused.
var mixedValueStatements = []struct {
	sql string
	err error
}{
	{"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 0, 'val-%[2]d'), (%[2]d + 100000, 7, 'val-%[2]d')", connector.ErrMixedShadow},
	{"INSERT INTO %[1]s (id, user_id, note) SELECT %[2]d, 0, 'val-%[2]d' UNION ALL SELECT %[2]d + 100000, 0e0, 'val-%[2]d'", connector.ErrUnreadable},
	{"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, 7, 'val-%[2]d') ON DUPLICATE KEY UPDATE user_id = 0", connector.ErrMixedShadow},
	{"UPDATE %[1]s SET note = 'val-%[2]d' WHERE user_id = 0 OR id = %[2]d", connector.ErrMixedShadow},
	{"UPDATE %[1]s SET note = 'val-%[2]d' WHERE user_id IN (0, 7)", connector.ErrMixedShadow},
	{"UPDATE %[1]s SET user_id = 0, note = 'val-%[2]d' WHERE id = %[2]d", connector.ErrMixedShadow},
	{"DELETE FROM %[1]s WHERE user_id BETWEEN -1 AND 1 AND note = 'val-%[2]d'", connector.ErrMixedShadow},
	{"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, ABS(0), 'val-%[2]d')", connector.ErrUnreadable},
	{"INSERT INTO %[1]s (id, user_id, note) VALUES (%[2]d, '0abc', 'val-%[2]d')", connector.ErrUnreadable},
	{"INSERT INTO %[1]s VALUES (%[2]d, 0)", connector.ErrUnreadable},
	{"INSERT INTO %[1]s (id, user_id, note) SELECT id, user_id, 'val-%[2]d' FROM items", connector.ErrUnreadable},
	{"UPDATE %[1]s SET note = 'val-%[2]d' WHERE user_id + 0 = 0", connector.ErrUnreadable},
	{"DELETE FROM %[1]s WHERE user_id IN (SELECT user_id FROM items) AND note = 'val-%[2]d'", connector.ErrUnreadable},
}

// Rows whose shadow column holds the shadow value, however it is written (other literals of
// the same number, expressions, a reversed comparison, IN, an INSERT without a column list by
// the table's definition, INSERT … SELECT, REPLACE), go to shadow only; statements that mix
// both traffics' rows or give values obroute cannot read are refused. Counted on the
// production servers' general logs and rows: nothing of them reaches production.
func TestShadowValuesNeverReachProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	id := 0
	for _, table := range []string{"t_order", "t_route"} {
		for _, f := range shadowValueStatements {
			id++
			q := fmt.Sprintf(f, table, id)
			if strings.HasPrefix(q, "SELECT") {
				rows, err := db.QueryContext(ctx, q)
				if err == nil {
					err = rows.Close()
				}
				if err != nil {
					t.Errorf("%s: %v", q, err)
				}
				continue
			}
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
		for _, f := range mixedValueStatements {
			id++
			q := fmt.Sprintf(f.sql, table, id)
			if _, err := db.ExecContext(ctx, q); !errors.Is(err, f.err) {
				t.Errorf("%s: err = %v, want %v", q, err, f.err)
			}
		}
		// Arguments, prepared and not.
		for _, v := range []any{int64(0), "0", []byte("0"), float64(0), false} {
			id++
			if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, user_id, note) VALUES (?, ?, ?)", id, v, fmt.Sprintf("val-%d", id)); err != nil {
				t.Errorf("INSERT with user_id %#v: %v", v, err)
			}
			id++
			stmt, err := db.PrepareContext(ctx, "INSERT INTO "+table+" VALUES (?, ?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stmt.ExecContext(ctx, id, v, fmt.Sprintf("val-%d", id)); err != nil {
				t.Errorf("prepared INSERT with user_id %#v: %v", v, err)
			}
			stmt.Close()
		}
		// Production rows go to production, however their value is written.
		for _, v := range []string{"7", "'7'", "7.0", "0.5", "6 + 1", "0x07", "TRUE", "NULL"} {
			id++
			q := fmt.Sprintf("INSERT INTO %s VALUES (%d, %s, 'prodval-%d')", table, id, v, id)
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	if lines := w.productionLines(t, "val-"); len(lines) != 0 {
		for _, l := range lines {
			if !strings.Contains(l, "prodval-") {
				t.Errorf("production received %s", l)
			}
		}
	}
	for i, b := range w.prod {
		for _, table := range []string{"t_order", "t_route"} {
			for _, r := range shadowRows(t, b, table) {
				if !strings.Contains(r, "prodval-") || strings.Split(r, ":")[1] == "0" {
					t.Errorf("production %s %s holds %s", b.Name, table, r)
				}
			}
			for _, r := range shadowRows(t, w.shadows[i], table) {
				if strings.Contains(r, "prodval-") || strings.Split(r, ":")[1] != "0" {
					t.Errorf("%s %s holds %s, not a shadow row", w.shadows[i].Name, table, r)
				}
			}
		}
	}
	if n := len(shadowRows(t, w.shadows[0], "t_order")) + len(shadowRows(t, w.shadows[1], "t_route")); n < 40 {
		t.Errorf("the shadow backends hold %d shadow rows; the test wrote too few", n)
	}
}

// Shadow-only traffic reads nothing of production: not the shard metadata, not
// information_schema, not a @@ variable. Shadow statements on the time-sharded table are
// routed by the shadow side's shard metadata and servers, on shadow tables by their
// definitions on the shadow backends. The production servers' general logs stay empty.
func TestShadowOnlyTrafficReadsNothingOfProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := hint.WithShadow(context.Background())
	bg := context.Background()
	for _, s := range []struct {
		ctx  context.Context
		sql  string
		args []any
	}{
		{ctx, "INSERT INTO orders (id, order_time, note) VALUES (1, '2025-03-02 10:00:00', 'x'), (5, '2025-03-03 10:00:00', 'x')", nil},
		{ctx, "INSERT INTO orders (id, order_time, note) VALUES (2, '2024-12-03 10:00:00', 'x')", nil},
		{ctx, "INSERT INTO orders (id, order_time, note) VALUES (?, ?, 'x')", []any{3, "2025-01-05 10:00:00.5"}},
		{ctx, "SELECT COUNT(*) FROM orders WHERE order_time >= '2024-11-15'", nil},
		{ctx, "SELECT id, note FROM orders WHERE order_time >= NOW() - INTERVAL 120 DAY ORDER BY id LIMIT 2", nil},
		{bg, "/*+ OBROUTE(shadow=true) */ UPDATE orders SET note = 'y' WHERE order_time >= '2025-01-01' AND id = 3", nil},
		{bg, "INSERT INTO t_order VALUES (1, 0, 'x')", nil},
		{bg, "UPDATE t_order SET note = 'y' WHERE user_id = 0", nil},
		{bg, "/* shadow */ INSERT INTO t_route (id, user_id, note) VALUES (1, 5, 'x')", nil},
		{ctx, "SELECT * FROM items", nil},
		{ctx, "SELECT @@version, @@time_zone", nil},
		{bg, "/*+ OBROUTE(shadow=true) */ ALTER TABLE orders ADD COLUMN extra INT NULL", nil},
		{ctx, "DESCRIBE orders", nil},
	} {
		var err error
		if strings.Contains(s.sql, "SELECT") || strings.HasPrefix(s.sql, "DESCRIBE") {
			var rows *sql.Rows
			if rows, err = db.QueryContext(s.ctx, s.sql, s.args...); err == nil {
				for rows.Next() {
				}
				err = rows.Close()
			}
		} else {
			_, err = db.ExecContext(s.ctx, s.sql, s.args...)
		}
		if err != nil {
			t.Errorf("%s: %v", s.sql, err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, order_time, note) VALUES (4, '2025-02-02 00:00:00', 'tx')"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(bg, "INSERT INTO t_order (id, user_id, note) VALUES (2, '0', 'tx')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	stmt, err := db.PrepareContext(ctx, "SELECT COUNT(*) FROM orders WHERE order_time >= ? AND order_time < ?")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := stmt.QueryRowContext(ctx, "2024-12-01", "2025-04-01").Scan(&n); err != nil || n != 5 {
		t.Errorf("prepared shadow count: %d, %v; want the 5 shadow rows", n, err)
	}
	stmt.Close()
	lines := w.productionLines(t, "")
	if len(lines) != 0 {
		t.Errorf("shadow-only traffic left %d lines in the production general logs, first ones: %v", len(lines), lines[:min(5, len(lines))])
	}
	shadowLines := len(w.shadows[0].GeneralLog(t)) + len(w.shadows[1].GeneralLog(t))
	if !slices.ContainsFunc(w.shadows[0].GeneralLog(t), func(e sqltest.GeneralLogEntry) bool { return strings.Contains(e.Text, "shard_metadata") }) {
		t.Error("shadow_hot's general log shows no read of its shard_metadata")
	}
	t.Logf("shadow-only traffic: %d production general-log lines, %d on the shadow backends", len(lines), shadowLines)
}

// A shadow read split across hot and cold tables, when hot and cold map to the same shadow
// backend, is one UNION ALL on that backend, as production's sub-queries of one backend are,
// and its rows are merged as one server holding them all would answer.
func TestShadowSplitReadOnOneShadowBackend(t *testing.T) {
	all := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "cold", "shadow")
	ctx := context.Background()
	for _, b := range all {
		for _, m := range orderMonths {
			if b.Name == "shadow" || m.hot == (b.Name == "hot") {
				b.Exec(t, "CREATE TABLE orders_"+m.suffix+" (id INT PRIMARY KEY, order_time DATETIME NOT NULL, note VARCHAR(64))")
			}
		}
		if b.Name != "cold" {
			if err := metadata.CreateTable(ctx, b.DB, metadata.DefaultTable); err != nil {
				t.Fatal(err)
			}
			for _, m := range orderMonths {
				b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)", "orders_"+m.suffix, m.min, m.max, m.hot)
			}
		}
	}
	shadowB := all[2]
	for i, m := range orderMonths {
		shadowB.Exec(t, fmt.Sprintf("INSERT INTO orders_%s VALUES (%d, '%s 08:00:00', 'n%d'), (%d, '%s 09:00:00', 'n%d')", m.suffix, 10*i+1, m.min, 10*i+1, 10*i+2, m.min, 10*i+2))
	}
	for _, b := range all {
		b.Exec(t, "TRUNCATE TABLE mysql.general_log")
	}
	w := &shadowWorld{now: shadowNow}
	w.cfg = fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;backends.shadow.dsn=%s;backends.shadow.role=shadow;"+
		"shadow.mappings.hot.shadow=shadow;shadow.mappings.cold.shadow=shadow;shadow.algorithms.h.kind=hint;shadow.default_algorithm=h;"+
		"time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2", all[0].DSN, all[1].DSN, shadowB.DSN)
	db := w.open(t)
	sctx := hint.WithShadow(ctx)
	for _, q := range []string{
		"SELECT id, note FROM orders WHERE order_time >= '2024-11-01' ORDER BY note DESC, id LIMIT 7",
		"SELECT COUNT(*), MIN(id), MAX(order_time) FROM orders WHERE order_time >= '2024-11-01'",
		"SELECT DISTINCT DATE(order_time) FROM orders WHERE order_time BETWEEN '2024-11-01' AND '2025-03-31' ORDER BY 1",
	} {
		got := queryAll(t, db.QueryContext, sctx, q)
		direct := strings.Replace(q, "FROM orders", "FROM (SELECT * FROM orders_202411 UNION ALL SELECT * FROM orders_202412 UNION ALL SELECT * FROM orders_202501 UNION ALL SELECT * FROM orders_202502 UNION ALL SELECT * FROM orders_202503) AS orders", 1)
		want := queryAll(t, shadowB.DB.QueryContext, ctx, direct)
		if !slices.Equal(got, want) {
			t.Errorf("%s: shadow split read %v, one server answers %v", q, got, want)
		}
	}
	unions := 0
	for _, e := range shadowB.GeneralLog(t) {
		if strings.Contains(e.Text, "orders_202412") {
			unions++
			if !strings.Contains(e.Text, "orders_202501") || strings.HasPrefix(e.Text, "/* cold_query */") {
				t.Errorf("shadow received %q: want hot and cold legs in one statement, without the cold tag", e.Text)
			}
		}
	}
	if unions < 3 {
		t.Errorf("shadow received %d statements reading its tables, want one per query (3 at least)", unions)
	}
	for _, b := range all[:2] {
		if log := b.GeneralLog(t); len(log) != 0 {
			t.Errorf("production %s received %d commands, first %+v", b.Name, len(log), log[0])
		}
	}
}

// queryAll returns every row of q as text (see textRows).
func queryAll(t *testing.T, query func(context.Context, string, ...any) (*sql.Rows, error), ctx context.Context, q string) []string {
	t.Helper()
	rows, err := query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := textRows(rows)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// misplacedHintStatements write the shadow hint, or a comment naming obroute, where obroute does
// not read hints: after the first keyword, at the end, in a line comment, inside an executable
// comment (which the server runs as code or skips by its version), or in a note. Each is
// refused; %d is a fresh id.
var misplacedHintStatements = []string{
	"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') /*+ OBROUTE(shadow=true) */",
	"INSERT INTO /* shadow */ items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"INSERT INTO items (id, user_id, note) /* SHADOW */ VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') -- obroute(shadow=true)",
	"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') # obroute shadow",
	"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') /* OBROUTE shadow=true */",
	"/* route via OBROUTE(shadow=true) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"/*+ QB_NAME(obroute) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"/*!999999 /* shadow */ */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"/*! /*+ OBROUTE(shadow=true) */ */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"/*!INSERT*/ /*+ OBROUTE(shadow=true) */ INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"/*! /* shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') */",
	"/*M! /* shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d') */",
	"/*!+ OBROUTE(shadow=true) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"INSERT /*! /*+ OBROUTE(shadow=true) */ */ INTO items (id, user_id, note) VALUES (%[1]d, 1, 'misplaced-%[1]d')",
	"(/* shadow */ SELECT note FROM items WHERE note = 'misplaced-%[1]d')",
	"SELECT note FROM items WHERE note = 'misplaced-%[1]d\\' /* shadow */ '",
}

// A hint written where obroute does not read hints, and a comment that names obroute without
// being read as a hint, are refused: counted on the production servers' general logs, none of
// them reaches production, and a hint-like text inside a string is data.
func TestShadowMisplacedHintsAreRefused(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for i, f := range misplacedHintStatements {
		q := fmt.Sprintf(f, 5000+i)
		_, err := db.ExecContext(ctx, q)
		// A comment whose running depends on the server's version makes the statement
		// unreadable before its hints are read.
		versioned := strings.Contains(q, "/*!999999") && errors.Is(err, connector.ErrUnreadable)
		if !errors.Is(err, hint.ErrMalformedHint) && !versioned {
			t.Errorf("%s: err = %v, want %v", q, err, hint.ErrMalformedHint)
		}
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO items (id, user_id, note) VALUES (1, 1, '/* shadow */ prodmisplaced')"); err != nil {
		t.Errorf("a hint-like string: %v", err)
	}
	if lines := w.productionLines(t, "misplaced-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a misplaced hint, first: %s", len(lines), lines[0])
	}
	if lines := w.productionLines(t, "prodmisplaced"); len(lines) != 1 {
		t.Errorf("production received %d inserts of the hint-like string, want 1: %v", len(lines), lines)
	}
}

// Values written in executable comments are read as MariaDB reads them: the content of one every
// server runs is statement text, and one the server runs or skips by its version is refused;
// values a session's sql_mode reads in another way (a double-quoted name under ANSI_QUOTES, ||
// under PIPES_AS_CONCAT, a backslash under NO_BACKSLASH_ESCAPES) are refused. Counted on the
// production servers' general logs and rows: nothing of them reaches production.
func TestShadowValuesInExecutableCommentsAndSQLModes(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for i, s := range []struct {
		mode, sql string
		err       error // nil: shadow traffic
	}{
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, /*!0*/, 'modeval-%[1]d')", nil},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7 /*!-7*/, 'modeval-%[1]d')", nil},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7 /*!40000 -7*/, 'modeval-%[1]d')", nil},
		{"", "/*!40101 INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, 'modeval-%[1]d') */", nil},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0 /*!99999 +7 */, 'modeval-%[1]d')", connector.ErrUnreadable},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0 /*!999999 +7 */, 'modeval-%[1]d')", connector.ErrUnreadable},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7 /*M!-7*/, 'modeval-%[1]d')", connector.ErrUnreadable},
		{"", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7 /*M!100000 -7*/, 'modeval-%[1]d')", connector.ErrUnreadable},
		{"", "UPDATE t_order SET note = 'modeval-%[1]d' WHERE user_id = 7 /*!99999 -7 */", connector.ErrUnreadable},
		{"ANSI_QUOTES", "UPDATE t_order SET note = 'modeval-%[1]d' WHERE \"user_id\" = 0 AND id = %[1]d", connector.ErrUnreadable},
		{"ANSI", "DELETE FROM t_order WHERE \"user_id\" = 0 AND id = %[1]d AND note = 'modeval-%[1]d'", connector.ErrUnreadable},
		{"STRICT_ALL_TABLES,ANSI_QUOTES", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, \"0\", 'modeval-%[1]d')", connector.ErrUnreadable},
		{"NO_BACKSLASH_ESCAPES", "INSERT INTO t_order (id, note, user_id) VALUES (%[1]d, 'modeval-%[1]d\\', 0) -- ', 7)", connector.ErrUnreadable},
		{"PIPES_AS_CONCAT", "UPDATE t_order SET note = 'modeval-%[1]d' WHERE user_id = 1 || 0", connector.ErrUnreadable},
		{"ANSI_QUOTES", "INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, '0', 'modeval-%[1]d')", nil},
	} {
		id := 6000 + i
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.mode != "" {
			if _, err := conn.ExecContext(ctx, "SET sql_mode = '"+s.mode+"'"); err != nil {
				t.Fatal(err)
			}
		}
		q := fmt.Sprintf(s.sql, id)
		_, err = conn.ExecContext(ctx, q)
		conn.Close()
		switch {
		case s.err == nil && err != nil:
			t.Errorf("%s (sql_mode %s): %v", q, s.mode, err)
		case s.err != nil && !errors.Is(err, s.err):
			t.Errorf("%s (sql_mode %s): err = %v, want %v", q, s.mode, err, s.err)
		case s.err == nil && !slices.Contains(shadowRows(t, w.shadows[0], "t_order"), fmt.Sprintf("%d:0:modeval-%d", id, id)):
			t.Errorf("%s (sql_mode %s): no shadow row %d on shadow_hot: %v", q, s.mode, id, shadowRows(t, w.shadows[0], "t_order"))
		}
	}
	if lines := w.productionLines(t, "modeval-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a shadow statement, first: %s", len(lines), lines[0])
	}
	for _, b := range w.prod {
		if rows := shadowRows(t, b, "t_order"); len(rows) != 0 {
			t.Errorf("production %s holds t_order rows %v", b.Name, rows)
		}
	}
}

// A backend hint naming a shadow backend makes the statement shadow traffic, refused when the
// rule does not accept it; one naming a production backend with the shadow hint goes to that
// backend's shadow. Inside a transaction begun as production traffic no statement goes to
// shadow. Counted on the general logs and rows: no shadow statement reaches production, and no
// production row reaches shadow.
func TestShadowBackendHints(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for i, s := range []struct {
		sql  string
		err  error  // nil: runs
		want string // the shadow backend that holds the row
	}{
		{"/*+ OBROUTE(backend=shadow_hot) */ INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7, 'bkval-%[1]d')", connector.ErrNoShadowBackend, ""},
		{"/*+ OBROUTE(backend=shadow_cold) */ UPDATE t_route SET note = 'bkval-%[1]d' WHERE user_id = 7", nil, ""}, // t_route's hint algorithm accepts
		{"/*+ OBROUTE(backend=shadow_hot, shadow=false) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'bkval-%[1]d')", hint.ErrHintConflict, ""},
		{"/*+ OBROUTE(backend=shadow_hot) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 0, 'bkval-%[1]d')", nil, "shadow_hot"},
		{"/*+ OBROUTE(backend=shadow_hot) */ INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, 'bkval-%[1]d')", nil, "shadow_hot"},
		{"/*+ OBROUTE(shadow=true, backend=hot) */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 0, 'bkval-%[1]d')", nil, "shadow_hot"},
		{"/*+ OBROUTE(backend=hot) */ INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, 'bkval-%[1]d')", nil, "shadow_hot"},
		{"/*+ OBROUTE(shadow=true, backend=cold) */ INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, 'bkval-%[1]d')", nil, "shadow_cold"},
	} {
		id := 7000 + i
		q := fmt.Sprintf(s.sql, id)
		_, err := db.ExecContext(ctx, q)
		switch {
		case s.err != nil && !errors.Is(err, s.err):
			t.Errorf("%s: err = %v, want %v", q, err, s.err)
		case s.err == nil && err != nil:
			t.Errorf("%s: %v", q, err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO items (id, user_id, note) VALUES (7100, 1, 'prodbk')"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"/*+ OBROUTE(backend=shadow_hot) */ INSERT INTO items (id, user_id, note) VALUES (7101, 0, 'bkval-7101')",
		"/* shadow */ INSERT INTO items (id, user_id, note) VALUES (7102, 0, 'bkval-7102')",
		"INSERT INTO t_order (id, user_id, note) VALUES (7103, 0, 'bkval-7103')",
	} {
		if _, err := tx.ExecContext(ctx, q); err == nil {
			t.Errorf("%s inside a production transaction ran", q)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if lines := w.productionLines(t, "bkval-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a shadow statement, first: %s", len(lines), lines[0])
	}
	for i, b := range w.shadows {
		for _, table := range []string{"items", "t_order", "t_route"} {
			for _, r := range shadowRows(t, b, table) {
				if strings.Split(r, ":")[1] != "0" || !strings.Contains(r, "bkval-") {
					t.Errorf("%s %s holds %s, not a shadow row", b.Name, table, r)
				}
			}
		}
		if i == 0 && len(shadowRows(t, b, "items"))+len(shadowRows(t, b, "t_order")) != 4 {
			t.Errorf("shadow_hot holds %v and %v, want the 4 shadow rows", shadowRows(t, b, "items"), shadowRows(t, b, "t_order"))
		}
	}
}

// A shadow table whose algorithm column is generated (the server computes it from other
// columns) is refused for every statement decided by its values: an UPDATE whose WHERE names only
// the column's sources reaches shadow rows as surely as one naming the column. Counted on the
// production servers' general logs: none of them reaches production.
func TestShadowGeneratedColumnIsRefused(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
		b.Exec(t, "CREATE TABLE t_gen (id INT PRIMARY KEY, src INT, user_id INT AS (src - 7) VIRTUAL, note VARCHAR(64))")
	}
	w.truncateLogs(t)
	w.cfg += ";shadow.tables.t_gen.algorithms=insert,update,delete,select"
	db := w.open(t)
	ctx := context.Background()
	for i, f := range []string{
		"INSERT INTO t_gen (id, src, note) VALUES (%[1]d, 7, 'genval-%[1]d')",
		"UPDATE t_gen SET note = 'genval-%[1]d' WHERE src = 7",
		"DELETE FROM t_gen WHERE src = 7 AND note = 'genval-%[1]d'",
		"UPDATE t_gen SET src = 7 WHERE id = %[1]d /* genval */",
	} {
		q := fmt.Sprintf(f, 8000+i)
		if _, err := db.ExecContext(ctx, q); !errors.Is(err, connector.ErrUnreadable) {
			t.Errorf("%s: err = %v, want %v", q, err, connector.ErrUnreadable)
		}
	}
	if lines := w.productionLines(t, "genval"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a statement on the generated column, first: %s", len(lines), lines[0])
	}
}

// A statement decided by column values that names a view is refused: the view may reach a shadow
// table (v_order over t_order), and obroute does not read which tables a view reaches. Hinted,
// it goes to shadow. The views are read on the shadow backends: counted on the production
// servers' general logs, none of these statements, nor the read, reaches production.
func TestShadowThroughViewsIsRefused(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
		b.Exec(t, "CREATE VIEW v_order AS SELECT * FROM t_order")
	}
	w.truncateLogs(t)
	db := w.open(t)
	ctx := context.Background()
	for i, f := range []string{
		"INSERT INTO v_order (id, user_id, note) VALUES (%[1]d, 0, 'viewval-%[1]d')",
		"UPDATE v_order SET note = 'viewval-%[1]d' WHERE user_id = 0",
		"DELETE FROM v_order WHERE user_id = 0 AND note = 'viewval-%[1]d'",
		"SELECT note FROM v_order WHERE user_id = 0 AND note = 'viewval-%[1]d'",
		"INSERT INTO items (id, user_id, note) SELECT id, user_id, 'viewval-%[1]d' FROM v_order",
	} {
		q := fmt.Sprintf(f, 8500+i)
		if _, err := db.ExecContext(ctx, q); !errors.Is(err, connector.ErrUnreadable) {
			t.Errorf("%s: err = %v, want %v", q, err, connector.ErrUnreadable)
		}
	}
	if _, err := db.ExecContext(ctx, "/* shadow */ INSERT INTO v_order (id, user_id, note) VALUES (8600, 0, 'viewval-8600')"); err != nil {
		t.Errorf("hinted INSERT through the view: %v", err)
	}
	if got := shadowRows(t, w.shadows[0], "t_order"); !slices.Equal(got, []string{"8600:0:viewval-8600"}) {
		t.Errorf("shadow_hot holds %v, want the hinted row", got)
	}
	if lines := w.productionLines(t, ""); len(lines) != 0 {
		t.Errorf("%d production general-log lines, first: %s", len(lines), lines[0])
	}
}
