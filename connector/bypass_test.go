package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/sqltest"
)

// routedFixture is four databases on the shared MariaDB — hot, cold and their shadows — each
// with items and audit_log (so that a statement sent to the wrong one lands silently, as it
// would in production), audit_log routed to cold, a shadow rule with a hint algorithm, and
// orders time-sharded over orders_202412 (cold) .. orders_202503 (hot), today 2025-03-15.
type routedFixture struct {
	db *sql.DB
	b  map[string]*sqltest.Backend
}

func newRoutedFixture(t *testing.T) *routedFixture {
	t.Helper()
	names := []string{"hot", "cold", "shadow_hot", "shadow_cold"}
	f := &routedFixture{b: map[string]*sqltest.Backend{}}
	cfg := &config.Config{
		Routes:     map[string]string{"audit_log": "cold"},
		Shadow:     shadowByHint(),
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	tables := ordersDecemberToMarch()
	for i, b := range sqltest.Shared(t, names...) {
		f.b[names[i]] = b
		role := names[i]
		if i > 1 {
			role = "shadow"
		}
		cfg.Backends = append(cfg.Backends, config.Backend{Name: names[i], Role: role, DSN: b.DSN})
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
		b.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
		for j, tb := range tables {
			if (j == 0) == (role == "cold" || names[i] == "shadow_cold") {
				b.Exec(t, "CREATE TABLE "+tb.Name+" (id INT AUTO_INCREMENT PRIMARY KEY, user_id INT, order_time DATETIME)")
			}
		}
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	f.db = sql.OpenDB(c)
	t.Cleanup(func() { f.db.Close() })
	return f
}

// rows returns the notes of table's rows with id on each backend, "-" where there is none.
func (f *routedFixture) rows(t *testing.T, table string, id int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, b := range f.b {
		var note string
		err := b.DB.QueryRow(fmt.Sprintf("SELECT note FROM %s WHERE id = ?", table), id).Scan(&note)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			note = "-"
		case err != nil:
			t.Fatal(err)
		}
		out[name] = note
	}
	return out
}

func (f *routedFixture) want(t *testing.T, table string, id int, want map[string]string) {
	t.Helper()
	got := f.rows(t, table, id)
	for _, name := range []string{"hot", "cold", "shadow_hot", "shadow_cold"} {
		w := want[name]
		if w == "" {
			w = "-"
		}
		if got[name] != w {
			t.Errorf("%s row %d: %v, want %v (- for none)", table, id, got, want)
			return
		}
	}
}

// MariaDB syntax the parser does not know — RETURNING, LIMIT ROWS EXAMINED, SET STATEMENT —
// follows the route of the table it names (GORM adds RETURNING to every INSERT on MariaDB).
func TestMariaDBSyntaxFollowsTheRoute(t *testing.T) {
	f := newRoutedFixture(t)
	ctx := context.Background()
	f.b["hot"].Exec(t, "INSERT INTO audit_log VALUES (2, 'decoy on hot'), (3, 'decoy on hot')")
	f.b["cold"].Exec(t, "INSERT INTO audit_log VALUES (3, 'cold three')")
	f.b["hot"].Exec(t, "INSERT INTO items VALUES (5, 'hot five')")
	f.b["cold"].Exec(t, "INSERT INTO items VALUES (5, 'decoy on cold')")

	var id int
	var note string
	if err := f.db.QueryRowContext(ctx, "INSERT INTO audit_log (id, note) VALUES (1, 'one') RETURNING id, note").Scan(&id, &note); err != nil || id != 1 || note != "one" {
		t.Fatalf("INSERT … RETURNING: %d %q %v", id, note, err)
	}
	f.want(t, "audit_log", 1, map[string]string{"cold": "one"})
	if err := f.db.QueryRowContext(ctx, "REPLACE INTO audit_log (id, note) VALUES (?, 'two') RETURNING note", 2).Scan(&note); err != nil || note != "two" {
		t.Fatalf("REPLACE … RETURNING: %q %v", note, err)
	}
	f.want(t, "audit_log", 2, map[string]string{"hot": "decoy on hot", "cold": "two"})
	if err := f.db.QueryRowContext(ctx, "DELETE FROM audit_log WHERE id = 3 RETURNING note").Scan(&note); err != nil || note != "cold three" {
		t.Fatalf("DELETE … RETURNING: %q %v", note, err)
	}
	f.want(t, "audit_log", 3, map[string]string{"hot": "decoy on hot"})
	if err := f.db.QueryRowContext(ctx, "SELECT note FROM audit_log WHERE id = 2 LIMIT ROWS EXAMINED 100").Scan(&note); err != nil || note != "two" {
		t.Fatalf("SELECT … LIMIT ROWS EXAMINED: %q %v, want cold's row", note, err)
	}
	if err := f.db.QueryRowContext(ctx, "SET STATEMENT max_statement_time = 10 FOR SELECT note FROM audit_log WHERE id = 2").Scan(&note); err != nil || note != "two" {
		t.Fatalf("SET STATEMENT … FOR SELECT (unreadable): %q %v, want cold's row", note, err)
	}
	// Naming no routed table, an unreadable statement still runs on the default backend.
	if err := f.db.QueryRowContext(ctx, "SET STATEMENT max_statement_time = 10 FOR SELECT note FROM items WHERE id = 5").Scan(&note); err != nil || note != "hot five" {
		t.Fatalf("unreadable statement on an unrouted table: %q %v, want hot's row", note, err)
	}
	// A time-sharded INSERT … RETURNING is rewritten for its physical table, RETURNING kept.
	if err := f.db.QueryRowContext(ctx, "INSERT INTO orders (user_id, order_time) VALUES (7, '2025-03-05 10:00:00') RETURNING id, user_id").Scan(&id, new(int)); err != nil || id != 1 {
		t.Fatalf("INSERT … RETURNING on a time-sharded table: %d %v", id, err)
	}
	var n int
	if err := f.b["hot"].DB.QueryRow("SELECT COUNT(*) FROM orders_202503 WHERE user_id = 7").Scan(&n); err != nil || n != 1 {
		t.Fatalf("orders_202503 on hot has %d rows of user 7 (%v), want 1", n, err)
	}
	// An unreadable statement on a time-sharded table is refused, not sent to the default.
	_, err := f.db.ExecContext(ctx, "INSERT LOW_PRIORITY INTO orders (user_id, order_time) VALUES (8, '2025-03-05')")
	if !errors.Is(err, routing.ErrUnreadable) {
		t.Fatalf("unreadable INSERT on a time-sharded table: %v, want routing.ErrUnreadable", err)
	}
}

// A shadow-hinted INSERT … RETURNING reaches the shadow backend of its route, and nothing else.
func TestShadowReturningReachesShadowOnly(t *testing.T) {
	f := newRoutedFixture(t)
	ctx := hint.WithShadow(context.Background())
	var id int
	if err := f.db.QueryRowContext(ctx, "INSERT INTO items (id, note) VALUES (10, 'shadow') RETURNING id").Scan(&id); err != nil || id != 10 {
		t.Fatalf("shadow INSERT … RETURNING into items: %d %v", id, err)
	}
	f.want(t, "items", 10, map[string]string{"shadow_hot": "shadow"})
	if err := f.db.QueryRowContext(ctx, "/* shadow */ INSERT INTO audit_log (id, note) VALUES (11, 'shadow') RETURNING id").Scan(&id); err != nil || id != 11 {
		t.Fatalf("shadow INSERT … RETURNING into audit_log: %d %v", id, err)
	}
	f.want(t, "audit_log", 11, map[string]string{"shadow_cold": "shadow"})
	if _, err := f.db.ExecContext(ctx, "INSERT LOW_PRIORITY INTO audit_log (id, note) VALUES (12, 'shadow')"); err != nil {
		t.Fatalf("shadow unreadable INSERT: %v", err)
	}
	f.want(t, "audit_log", 12, map[string]string{"shadow_cold": "shadow"})
}

// Inside a transaction bound to hot, a statement on a table routed to cold is refused.
func TestStaticRouteInTransactionIsRefused(t *testing.T) {
	f := newRoutedFixture(t)
	ctx := context.Background()
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO items VALUES (20, 'tx')"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO audit_log VALUES (20, 'tx')", "INSERT INTO audit_log (id, note) VALUES (20, 'tx') RETURNING id"} {
		if _, err := tx.ExecContext(ctx, q); !errors.Is(err, routing.ErrCrossBackendTx) {
			t.Errorf("%s in a hot transaction: %v, want routing.ErrCrossBackendTx", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	f.want(t, "items", 20, map[string]string{"hot": "tx"})
	f.want(t, "audit_log", 20, nil)
}

// "EXPLAIN route id" is MySQL's DESCRIBE of column id of a table named route.
func TestExplainOfTableRoute(t *testing.T) {
	f := newRoutedFixture(t)
	f.b["hot"].Exec(t, "CREATE TABLE route (id INT PRIMARY KEY, name VARCHAR(10))")
	for _, q := range []string{"EXPLAIN route id", "DESCRIBE route id", "explain route `name`;"} {
		rows, err := f.db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if len(cols) == 0 || cols[0] != "Field" || n != 1 {
			t.Errorf("%s: columns %v, %d rows; want the server's DESCRIBE of one column", q, cols, n)
		}
	}
	rows, err := f.db.Query("EXPLAIN ROUTE SELECT id FROM route")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if len(cols) != 3 || cols[0] != "section" {
		t.Errorf("EXPLAIN ROUTE SELECT …: columns %v, want obroute's plan", cols)
	}
}

// A declared L1 query is checked against its range, not against the tables that exist: a
// range before the hot window is refused whether a table holds it or not.
func TestL1BeforeWindowIsRefusedWithoutTable(t *testing.T) {
	f := newRoutedFixture(t)
	ctx := hint.WithLevel(context.Background(), hint.L1)
	for _, q := range []string{
		"SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-02' AND order_time < '2024-12-03'", // orders_202412 holds it
		"SELECT COUNT(*) FROM orders WHERE order_time >= '2023-12-02' AND order_time < '2023-12-03'", // no table does
	} {
		var n int
		if err := f.db.QueryRowContext(ctx, q).Scan(&n); !errors.Is(err, routing.ErrLevelViolation) {
			t.Errorf("L1 %s: %v (n=%d), want routing.ErrLevelViolation", q, err, n)
		}
	}
}
