// Forms of statement a second attack on shadow routing found reaching production (2026-12-04):
// the shadow column's value decided by a clause other than WHERE (HAVING, a join's ON, a derived
// table), a hint after a comment the hint reader misread, and views that exist on one side only.
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
	"github.com/obroute/obroute/sqltest"
)

// clauseStatements decide user_id of t_order (value_match: 0 is shadow) in a clause other than
// WHERE; %[1]d is a fresh id. want is nil for a statement that goes to shadow, else the refusal.
var clauseStatements = []struct {
	sql  string
	want error
}{
	{"SELECT note FROM t_order GROUP BY user_id, note HAVING user_id = 0 /* clause-%[1]d */", nil},
	{"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING user_id = 0 /* clause-%[1]d */", nil},
	{"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING 0 = user_id AND COUNT(*) > 0 /* clause-%[1]d */", nil},
	{"SELECT user_id FROM t_order HAVING user_id = 0 /* clause-%[1]d */", nil},
	{"SELECT t_order.user_id FROM t_order GROUP BY t_order.user_id HAVING t_order.user_id IN (0) /* clause-%[1]d */", nil},
	{"SELECT o.note FROM items i JOIN t_order o ON o.user_id = 0 AND o.id = i.id /* clause-%[1]d */", nil},
	{"SELECT user_id AS u, COUNT(*) FROM t_order GROUP BY u HAVING u = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT COUNT(*) AS user_id FROM t_order HAVING user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT COUNT(*) FROM t_order HAVING MAX(user_id) = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT note AS user_id FROM t_order GROUP BY user_id HAVING t_order.user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT COUNT(*), user_id FROM t_order HAVING user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT note FROM t_order GROUP BY note HAVING user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT note FROM t_order GROUP BY note HAVING SUM(user_id = 0) > 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT o.note FROM items i LEFT JOIN t_order o ON o.user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT d.note FROM (SELECT * FROM t_order WHERE user_id = 0) d /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT d.note FROM (SELECT * FROM t_order) d WHERE d.user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"WITH d AS (SELECT * FROM t_order WHERE user_id = 0) SELECT note FROM d /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT note FROM items WHERE id IN (SELECT id FROM t_order WHERE user_id = 0) /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT note FROM t_order WHERE user_id = 0 UNION SELECT note FROM t_order WHERE user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"UPDATE t_order o JOIN (SELECT 0 AS u) x ON o.user_id = x.u SET o.note = 'clause-%[1]d'", connector.ErrUnreadable},
	{"SELECT o.note FROM t_order o JOIN items i USING (user_id) WHERE i.user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"SELECT t_order.note FROM t_order NATURAL JOIN items WHERE items.user_id = 0 /* clause-%[1]d */", connector.ErrUnreadable},
	{"DELETE o FROM t_order o JOIN items i ON o.user_id = 0 AND i.id = o.id WHERE o.note = 'clause-%[1]d'", nil},
}

// The shadow column's value is read as the server reads it in every clause that decides it: a
// HAVING on the grouped column (or without GROUP BY and aggregates, on each row), an inner
// join's ON; what obroute cannot read as the server does (a select-list alias, an aggregate, an
// outer join's ON, a derived table, a CTE, a subquery, a UNION) is refused. Counted on the
// production servers' general logs: none of these statements reaches production.
func TestShadowValueInOtherClausesNeverReachesProduction(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range w.shadows {
		b.Exec(t, "INSERT INTO t_order (id, user_id, note) VALUES (1, 0, 'shadowrow')")
		b.Exec(t, "INSERT INTO items (id, user_id, note) VALUES (1, 0, 'shadowitem')")
	}
	db := w.open(t)
	ctx := context.Background()
	for i, s := range clauseStatements {
		q := fmt.Sprintf(s.sql, 9000+i)
		var err error
		if strings.HasPrefix(q, "SELECT") || strings.HasPrefix(q, "WITH") {
			var got []string
			if got, err = queryStrings(ctx, db, q); err == nil && s.want == nil && len(got) == 0 {
				t.Errorf("%s: no row, want the shadow row", q)
			}
		} else {
			_, err = db.ExecContext(ctx, q)
		}
		switch {
		case s.want == nil && err != nil:
			t.Errorf("%s: %v, want it run on shadow", q, err)
		case s.want != nil && !errors.Is(err, s.want):
			t.Errorf("%s: err = %v, want %v", q, err, s.want)
		}
	}
	if lines := w.productionLines(t, "clause-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a shadow-decided statement, first: %s", len(lines), lines[0])
	}
}

// queryStrings returns the first column of every row of q.
func queryStrings(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(*(vals[0].(*any))))
	}
	return out, rows.Err()
}

// commentFormStatements lead an INSERT with a shadow hint after, or inside, a comment form
// whose extent the hint reader must read as MariaDB does: "--" followed by a control
// character starts a line comment, a NUL ends one, "/**" starts a block comment. Each is
// refused (the hint would be lost) or runs on shadow; %[1]d is a fresh id.
var commentFormStatements = []struct {
	sql    string
	shadow bool
}{
	{"--\x01/* shadow */\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"--\x01/* shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"--\x1f/* shadow */\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"--\x7fshadow\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"#\x01shadow\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"-- note /* shadow */\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"-- note\x00/* shadow */\nINSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/** shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/**shadow*/ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/*\x01shadow*/ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/* *shadow* */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/*-shadow-*/ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"/** note */ /* shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", true},
	{"--\x01note\n/* shadow */ INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", true},
	{"INSERT /** shadow */ INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d')", false},
	{"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d') --\x01 shadow", false},
	{"INSERT INTO items (id, user_id, note) VALUES (%[1]d, 1, 'cform-%[1]d') /**shadow*/", false},
}

// A shadow hint after a comment whose extent the hint reader misread reached production; now
// the reader agrees with MariaDB on where a comment starts and ends, and a comment naming
// the shadow hint that is not read as one is refused. Counted on the production servers'
// general logs and rows: none of these statements reaches production.
func TestShadowHintAfterMisreadCommentsNeverReachesProduction(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	var wantShadow []string
	for i, s := range commentFormStatements {
		id := 9100 + i
		q := fmt.Sprintf(s.sql, id)
		_, err := db.ExecContext(ctx, q)
		switch {
		case s.shadow && err != nil:
			t.Errorf("%q: %v, want it run on shadow", q, err)
		case s.shadow:
			wantShadow = append(wantShadow, fmt.Sprintf("%d:1:cform-%d", id, id))
		case !errors.Is(err, hint.ErrMalformedHint):
			t.Errorf("%q: err = %v, want %v", q, err, hint.ErrMalformedHint)
		}
	}
	if lines := w.productionLines(t, "cform-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a hinted statement, first: %q", len(lines), lines[0])
	}
	for _, b := range w.prod {
		if rows := shadowRows(t, b, "items"); len(rows) != 0 {
			t.Errorf("production %s holds items rows %v", b.Name, rows)
		}
	}
	if got := shadowRows(t, w.shadows[0], "items"); !slices.Equal(got, wantShadow) {
		t.Errorf("shadow_hot holds %v, want %v", got, wantShadow)
	}
}

// Views that exist on one side only: an unhinted statement on a view of production's database
// alone (v_prod over t_order) may write or read shadow rows there, and is refused while the
// rule reads column values, as one on a view of the shadow backends is; the production views
// are read only for a statement the rule did not find shadow traffic, so shadow traffic reads
// nothing of production. Hinted, a statement on a view goes to shadow (where a view of
// production alone does not exist). Counted on the production servers' general logs and rows.
func TestShadowViewsOfOneSideNeverReachProduction(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range w.prod {
		b.Exec(t, "CREATE VIEW v_prod AS SELECT * FROM t_order")
	}
	for _, b := range w.shadows {
		b.Exec(t, "CREATE VIEW v_shadow AS SELECT * FROM t_order")
	}
	w.truncateLogs(t)
	ctx := context.Background()
	// Shadow traffic alone, first: nothing of production is read, the views neither.
	db := w.open(t)
	for i, q := range []string{
		"INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, 'vside-%[1]d')",
		"/* shadow */ INSERT INTO v_shadow (id, user_id, note) VALUES (%[1]d, 0, 'vside-%[1]d')",
		"/* shadow */ UPDATE v_shadow SET note = 'vside-%[1]d' WHERE user_id = 0",
	} {
		q = fmt.Sprintf(q, 9300+i)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, "/* shadow */ INSERT INTO v_prod (id, user_id, note) VALUES (9310, 0, 'vside-9310')"); err == nil {
		t.Error("a hinted INSERT into a view production alone has ran")
	}
	if lines := w.productionLines(t, ""); len(lines) != 0 {
		t.Errorf("shadow traffic left %d production general-log lines, first: %s", len(lines), lines[0])
	}
	for i, s := range []struct {
		sql  string
		want error
	}{
		{"INSERT INTO v_prod (id, user_id, note) VALUES (%[1]d, 0, 'vside-%[1]d')", connector.ErrUnreadable},
		{"INSERT INTO v_prod VALUES (%[1]d, 0, 'vside-%[1]d')", connector.ErrUnreadable},
		{"UPDATE v_prod SET note = 'vside-%[1]d' WHERE user_id = 0", connector.ErrUnreadable},
		{"DELETE FROM v_prod WHERE user_id = 0 AND note <> 'vside-%[1]d'", connector.ErrUnreadable},
		{"SELECT note FROM v_prod WHERE user_id = 0 AND note <> 'vside-%[1]d'", connector.ErrUnreadable},
		{"INSERT INTO v_shadow (id, user_id, note) VALUES (%[1]d, 0, 'vside-%[1]d')", connector.ErrUnreadable},
	} {
		q := fmt.Sprintf(s.sql, 9320+i)
		if _, err := db.ExecContext(ctx, q); !errors.Is(err, s.want) {
			t.Errorf("%s: err = %v, want %v", q, err, s.want)
		}
	}
	// Production traffic on a view, declared, runs there.
	if _, err := db.ExecContext(ctx, "/*+ OBROUTE(shadow=false) */ INSERT INTO v_prod (id, user_id, note) VALUES (9340, 7, 'prodview')"); err != nil {
		t.Errorf("a production INSERT into v_prod: %v", err)
	}
	if lines := w.productionLines(t, "vside-"); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry a statement on a view, first: %s", len(lines), lines[0])
	}
	for _, b := range w.prod {
		for _, r := range shadowRows(t, b, "t_order") {
			if r != "9340:7:prodview" {
				t.Errorf("production %s holds t_order row %s", b.Name, r)
			}
		}
	}
}

// A view of the shadow backend's database that reads another database (a production database on
// the same server: CREATE VIEW v_order AS SELECT * FROM test.t_order in shadowdb) sent hinted
// shadow traffic to production's rows. Shadow traffic naming a view whose definition reaches
// another database, directly or through another view, or that cannot be read, is refused;
// views within the shadow database run. Counted on production's rows (the databases share
// one server, so one general log).
func TestShadowViewOfAnotherDatabaseNeverReachesProduction(t *testing.T) {
	b, shadowDSN := newSharedShadowServer(t)
	for _, db := range []string{"test", "shadowdb"} {
		for _, tb := range []string{"t_order", "items"} {
			b.Exec(t, "CREATE TABLE "+db+"."+tb+" (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
		}
	}
	b.Exec(t, "CREATE VIEW shadowdb.v_order AS SELECT * FROM test.t_order")
	b.Exec(t, "CREATE VIEW shadowdb.v_nested AS SELECT * FROM shadowdb.v_order WHERE user_id = 0")
	b.Exec(t, "CREATE VIEW shadowdb.v_items AS SELECT i.id, i.user_id, i.note FROM shadowdb.items i")
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+b.DSN+";backends.shadow_hot.dsn="+shadowDSN+";backends.shadow_hot.role=shadow;"+
		"shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.h.kind=hint;shadow.default_algorithm=h;"+
		"shadow.algorithms.v.kind=value_match;shadow.algorithms.v.column=user_id;shadow.algorithms.v.operation=insert;shadow.algorithms.v.values=0;"+
		"shadow.tables.t_order.algorithms=h,v")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b.Exec(t, "INSERT INTO test.t_order (id, user_id, note) VALUES (1, 7, 'prod')")
	ctx := context.Background()
	for i, s := range []struct {
		ctx context.Context
		sql string
	}{
		{ctx, "/* shadow */ INSERT INTO v_order (id, user_id, note) VALUES (%[1]d, 0, 'xdb-%[1]d')"},
		{ctx, "/*+ OBROUTE(shadow=true) */ UPDATE v_order SET note = 'xdb-%[1]d' WHERE user_id = 0"},
		{hint.WithShadow(ctx), "DELETE FROM v_nested WHERE note = 'xdb-none-%[1]d'"},
		{hint.WithShadow(ctx), "INSERT INTO items (id, user_id, note) SELECT id + 100, user_id, 'xdb-%[1]d' FROM v_nested"},
		{hint.WithShadow(ctx), "SELECT note FROM v_order WHERE note <> 'xdb-%[1]d'"},
	} {
		q := fmt.Sprintf(s.sql, 9400+i)
		if _, err := db.ExecContext(s.ctx, q); !errors.Is(err, connector.ErrUnreadable) {
			t.Errorf("%s: err = %v, want %v", q, err, connector.ErrUnreadable)
		}
	}
	// A rule of the hint alone reads the shadow backends' views for shadow traffic too.
	hintOnly, err := sql.Open("obroute", "obroute:backends.hot.dsn="+b.DSN+";backends.shadow_hot.dsn="+shadowDSN+";backends.shadow_hot.role=shadow;"+
		"shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.h.kind=hint;shadow.default_algorithm=h")
	if err != nil {
		t.Fatal(err)
	}
	defer hintOnly.Close()
	if _, err := hintOnly.ExecContext(hint.WithShadow(ctx), "INSERT INTO v_order (id, user_id, note) VALUES (9420, 0, 'xdb-9420')"); !errors.Is(err, connector.ErrUnreadable) {
		t.Errorf("shadow INSERT INTO v_order under a rule of hints: err = %v, want %v", err, connector.ErrUnreadable)
	}
	if _, err := db.ExecContext(ctx, "/* shadow */ INSERT INTO v_items (id, user_id, note) VALUES (9450, 0, 'xdb-own')"); err != nil {
		t.Errorf("a hinted INSERT into a view of the shadow database: %v", err)
	}
	if got := shadowRows(t, b, "shadowdb.items"); !slices.Equal(got, []string{"9450:0:xdb-own"}) {
		t.Errorf("shadowdb.items holds %v, want the hinted row", got)
	}
	for _, tb := range []string{"test.t_order", "test.items"} {
		want := []string(nil)
		if tb == "test.t_order" {
			want = []string{"1:7:prod"}
		}
		if got := shadowRows(t, b, tb); !slices.Equal(got, want) {
			t.Errorf("production's %s holds %v, want %v", tb, got, want)
		}
	}
}

// Shadow traffic naming production's database — a table qualified by it, or USE of it — on a
// shadow backend that shares production's server would read or write production's tables: it
// is refused, and production's rows stay as they were; the shadow database's own tables, named
// plainly or by the shadow database, are shadow traffic as before.
func TestShadowNamingProductionsDatabaseNeverReachesProduction(t *testing.T) {
	b, shadowDSN := newSharedShadowServer(t)
	for _, db := range []string{"test", "shadowdb"} {
		b.Exec(t, "CREATE TABLE "+db+".t_order (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
	}
	b.Exec(t, "INSERT INTO test.t_order (id, user_id, note) VALUES (1, 7, 'prod')")
	db := openSharedShadow(t, b, shadowDSN)
	ctx := context.Background()
	for _, s := range []struct {
		ctx context.Context
		sql string
	}{
		{ctx, "/* shadow */ INSERT INTO test.t_order (id, user_id, note) VALUES (2, 0, 'leak')"},
		{ctx, "/* shadow */ INSERT INTO `test`.`t_order` (id, user_id, note) VALUES (3, 0, 'leak')"},
		{ctx, "/* shadow */ UPDATE TEST . t_order SET note = 'leak'"},
		{hint.WithShadow(ctx), "DELETE FROM test.t_order"},
		{hint.WithShadow(ctx), "INSERT INTO t_order (id, user_id, note) SELECT id + 10, user_id, note FROM test.t_order"},
		{ctx, "/* shadow */ USE test"},
	} {
		if _, err := db.ExecContext(s.ctx, s.sql); !errors.Is(err, connector.ErrUnreadable) || !strings.Contains(err.Error(), "database of a production backend") {
			t.Errorf("%s: err = %v, want ErrUnreadable naming production's database", s.sql, err)
		}
	}
	for _, q := range []string{
		"/* shadow */ INSERT INTO t_order (id, user_id, note) VALUES (20, 0, 'own')",
		"/* shadow */ INSERT INTO shadowdb.t_order (id, user_id, note) VALUES (21, 0, 'own')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	sharedShadowRows(t, b, []string{"1:7:prod"}, []string{"20:0:own", "21:0:own"})
}

// A client session has one namespace of SQL-level prepared statements: a PREPARE p that goes
// to the shadow side replaces the production p prepared before (and the other way round), as
// on one server, so EXECUTE p runs the statement prepared last; DEALLOCATE p leaves no p on
// either side. Before, EXECUTE p ran production's old p on production, and after DEALLOCATE the
// shadow side's stale p ran.
func TestShadowPrepareReplacesTheOtherSidesStatement(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) error {
		_, err := conn.ExecContext(ctx, q)
		return err
	}
	for _, q := range []string{
		"PREPARE p FROM 'INSERT INTO t_order (id, user_id, note) VALUES (862, 7, ''prod-862'')'",
		"PREPARE p FROM 'INSERT INTO t_order (id, user_id, note) VALUES (863, 0, ''shadow-863'')'",
		"EXECUTE p",
		// and back: production's p replaces the shadow one
		"PREPARE p FROM 'INSERT INTO t_order (id, user_id, note) VALUES (864, 7, ''prod-864'')'",
		"EXECUTE p",
		"DEALLOCATE PREPARE p",
	} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := exec("EXECUTE p"); err == nil {
		t.Errorf("EXECUTE p after DEALLOCATE PREPARE p ran, want the server's unknown prepared statement")
	}
	if got := shadowRows(t, w.prod[0], "t_order"); !slices.Equal(got, []string{"864:7:prod-864"}) {
		t.Errorf("production's t_order holds %v, want only the row of the production p prepared last", got)
	}
	if got := shadowRows(t, w.shadows[0], "t_order"); !slices.Equal(got, []string{"863:0:shadow-863"}) {
		t.Errorf("shadow's t_order holds %v, want the shadow row", got)
	}
}

// openSharedShadow opens obroute over the shared server b (production: its database test) and
// shadowDSN (shadowdb), t_order a shadow table of the hint algorithm, closed at cleanup.
func openSharedShadow(t *testing.T, b *sqltest.Backend, shadowDSN string) *sql.DB {
	t.Helper()
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+b.DSN+";backends.shadow_hot.dsn="+shadowDSN+";backends.shadow_hot.role=shadow;"+
		"shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.h.kind=hint;shadow.default_algorithm=h;shadow.tables.t_order.algorithms=h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sharedShadowRows fails unless production's test.t_order holds prod and shadowdb.t_order
// shadow ("id:user_id:note", by id).
func sharedShadowRows(t *testing.T, b *sqltest.Backend, prod, shadow []string) {
	t.Helper()
	if got := shadowRows(t, b, "test.t_order"); !slices.Equal(got, prod) {
		t.Errorf("production's test.t_order holds %v, want %v", got, prod)
	}
	if got := shadowRows(t, b, "shadowdb.t_order"); !slices.Equal(got, shadow) {
		t.Errorf("shadowdb.t_order holds %v, want the shadow rows %v", got, shadow)
	}
}

// newSharedShadowServer starts one MariaDB (general log on) whose database test is production's
// and shadowdb, created here, the shadow backend's: it returns the server and shadowdb's DSN.
func newSharedShadowServer(t *testing.T) (*sqltest.Backend, string) {
	t.Helper()
	b := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot")[0]
	shadowDSN := strings.Replace(b.DSN, "/test?", "/shadowdb?", 1)
	if shadowDSN == b.DSN {
		t.Fatalf("the backend's DSN names no database test")
	}
	b.Exec(t, "CREATE DATABASE shadowdb")
	return b, shadowDSN
}
