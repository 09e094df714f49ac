package connector_test

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// sideConns opens one connection of obroute's handle and one of the reference server, closed
// at the test's end.
func sideConns(t *testing.T, f *logicalFixture) map[*sql.DB]*sql.Conn {
	t.Helper()
	conns := map[*sql.DB]*sql.Conn{}
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		conn, err := side.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conns[side] = conn
	}
	return conns
}

// runOn runs q on conn, with {db} the side's database, and returns its rows as text with the
// side's database name written {db}; or the error.
func runOn(t *testing.T, conn *sql.Conn, db, q string) ([][]string, error) {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), strings.ReplaceAll(q, "{db}", db))
	if err != nil {
		return nil, err
	}
	out := dump(t, rows)
	for _, r := range out {
		for i := range r {
			r[i] = strings.ReplaceAll(r[i], db, "{db}")
		}
	}
	return out, nil
}

// bothSides runs q through obroute and on the reference server, each on its connection, and
// returns both answers (see runOn).
func bothSides(t *testing.T, f *logicalFixture, conns map[*sql.DB]*sql.Conn, dbs map[*sql.DB]string, q string) (got, want [][]string) {
	t.Helper()
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		rows, err := runOn(t, conns[side], dbs[side], q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if side == f.db {
			got = rows
		} else {
			want = rows
		}
	}
	return got, want
}

// In a transaction bound to the cold backend, whose database has another name than the default
// backend's, the catalog names the client session's database as the client sees it (the
// default backend's, DATABASE() outside the transaction), as one server would: never cold's.
func TestCatalogInColdTransactionNamesTheClientsDatabase(t *testing.T) {
	f := newLogicalFixture(t, nil)
	if database(t, f.hot.DB) == database(t, f.cold.DB) {
		t.Fatal("the fixture's backends share a database name: the case shows nothing")
	}
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	conns := sideConns(t, f)
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO audit_log VALUES (3, 'three')", // the transaction is cold's
		"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}' ORDER BY 2",
		"SELECT DISTINCT TABLE_SCHEMA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'audit_log'",
		"SELECT TABLE_SCHEMA, INDEX_SCHEMA, INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'orders' ORDER BY 3",
		"SHOW TABLES",
		"SHOW FULL TABLES FROM `{db}` LIKE 'a%'",
		"SELECT COUNT(*) FROM audit_log",
		"COMMIT",
	} {
		got, want := bothSides(t, f, conns, dbs, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %q, one server %q", q, got, want)
		}
		if strings.HasPrefix(q, "S") && len(want) == 0 {
			t.Errorf("%s: one server answers no row: the case shows nothing", q)
		}
	}
}

// USE of the client session's database (the default backend's name) puts every backend's server
// session in its own database, as a USE puts one server's session in the one that holds every
// table: cold's server session does not go to hot's database (which its server holds too here,
// with other tables) and reads audit_log where it is, in a transaction bound to cold as outside.
// A table qualified by the client session's database on cold is refused: the name is another
// database there.
func TestUseOfTheClientsDatabaseOnEveryBackend(t *testing.T) {
	f := newLogicalFixture(t, nil)
	other := sqltest.Shared(t, "other")[0]
	// A table of hot's database named as cold's routed table: reaching it would be a wrong answer.
	mustExec(t, f.hot.DB, "CREATE TABLE audit_log "+auditDDL)
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	conns := sideConns(t, f)
	otherDB := database(t, other.DB)
	for _, q := range []string{
		"USE `{db}`",
		"SELECT id, note FROM audit_log ORDER BY id",
		"USE `" + otherDB + "`",
		"USE `{db}`",
		"SELECT COUNT(*) FROM audit_log",
		"BEGIN",
		"INSERT INTO audit_log VALUES (3, 'three')", // bound to cold
		"USE `{db}`",
		"SELECT id, note FROM audit_log ORDER BY id",
		"SELECT DATABASE()", // refused there: cold's would be another name
		"COMMIT",
		"SELECT id, note FROM audit_log ORDER BY id",
		"SHOW TABLES LIKE 'audit%'",
		"SELECT DATABASE()",
	} {
		if q == "SELECT DATABASE()" && !inTx(t, conns[f.db]) {
			got, want := bothSides(t, f, conns, dbs, q)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: through obroute %q, one server %q", q, got, want)
			}
			continue
		}
		if q == "SELECT DATABASE()" {
			if _, err := runOn(t, conns[f.db], dbs[f.db], q); !errors.Is(err, connector.ErrSessionState) {
				t.Errorf("%s in a transaction bound to cold: %v, want ErrSessionState", q, err)
			}
			if _, err := runOn(t, conns[f.one.DB], dbs[f.one.DB], q); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, want := bothSides(t, f, conns, dbs, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %q, one server %q", q, got, want)
		}
	}
	var n int
	if err := f.hot.DB.QueryRow("SELECT COUNT(*) FROM audit_log").Scan(&n); err != nil || n != 0 {
		t.Errorf("hot's own audit_log holds %d rows (%v): the INSERT went to hot's database", n, err)
	}
	// A name qualified by the client session's database is the default backend's own (items);
	// on cold, whose database has another name, it would be hot's database: refused.
	if got, want := bothSides(t, f, conns, dbs, "SELECT COUNT(*) FROM `{db}`.items"); !reflect.DeepEqual(got, want) {
		t.Errorf("{db}.items: through obroute %q, one server %q", got, want)
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM `{db}`.audit_log",
		"SELECT COUNT(*) FROM `{db}`.orders WHERE order_time < '2026-11-01'",
		"UPDATE `{db}`.audit_log SET note = 'x' WHERE id = 1",
		"SELECT note, DATABASE() FROM audit_log WHERE id = 1",
	} {
		if _, err := runOn(t, conns[f.db], dbs[f.db], q); !errors.Is(err, connector.ErrSessionState) {
			t.Errorf("%s on cold: %v, want ErrSessionState", q, err)
		}
	}
}

// With tables whose names differ only in case (lower_case_table_names=0), the server looks a
// table up by a comparison the parser makes from a NOT (NOT (TABLE_NAME <> 'X') is TABLE_NAME =
// 'X') and by an IN whose values are all one in the column's collation: through obroute as on
// one server, or refused.
func TestCatalogLookupsThroughNotAndIn(t *testing.T) {
	f := newLogicalFixture(t, nil)
	var lower int
	if err := f.one.DB.QueryRow("SELECT @@lower_case_table_names").Scan(&lower); err != nil || lower != 0 {
		t.Skipf("lower_case_table_names=%d: names compare in any case", lower)
	}
	for _, b := range []*sqltest.Backend{f.hot, f.one} {
		mustExec(t, b.DB, "CREATE TABLE ITEMS (x INT)")
		mustExec(t, b.DB, "CREATE TABLE Items (x INT)")
	}
	const where = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
	for _, c := range []struct {
		cond    string
		refused bool
	}{
		{cond: "NOT (TABLE_NAME <> 'ITEMS')"},
		{cond: "NOT (TABLE_NAME != 'Items')"},
		{cond: "NOT TABLE_NAME <> 'ITEMS'"},
		{cond: "!(TABLE_NAME <> 'ITEMS')"},
		{cond: "NOT (TABLE_NAME = 'ITEMS')"},
		{cond: "NOT (TABLE_NAME < 'ITEMS')"},
		{cond: "NOT (TABLE_NAME LIKE 'ITEMS')"},
		{cond: "TABLE_NAME IN ('ITEMS', 'ITEMS')"},
		{cond: "TABLE_NAME IN ('Items', 'ITEMS', 'items')"},
		{cond: "TABLE_NAME IN ('ITEMS', 'orders')"},
		{cond: "TABLE_NAME IN ('ITEMS', 'Items', 'orders')"},
		{cond: "NOT (TABLE_NAME <> 'ITEMS' OR 0)", refused: true},
		{cond: "NOT NOT (TABLE_NAME = 'ITEMS')", refused: true},
		{cond: "TABLE_NAME IN ('ITEMS', CONCAT('IT', 'EMS'))", refused: true},
		{cond: "TABLE_NAME IN ('ITEMS', 'itém')", refused: true},
	} {
		q := where + c.cond + " ORDER BY BINARY TABLE_NAME"
		_, want := readText(t, f.one.DB, q)
		rows, err := f.db.Query(q)
		if c.refused {
			if err == nil {
				got := dump(t, rows)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: through obroute %q, one server %q (want the same, or a refusal)", c.cond, got, want)
				}
			} else if !errors.Is(err, connector.ErrCatalog) {
				t.Errorf("%s: %v, want ErrCatalog", c.cond, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.cond, err)
			continue
		}
		if got := dump(t, rows); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %q, one server %q", c.cond, got, want)
		}
	}
}

// DESCRIBE, SHOW COLUMNS, SHOW INDEX and SHOW CREATE TABLE of a time-sharded table name it by
// its logical name, and leave every other value as the server gave it: a column default or
// comment that equals the physical table's name stays.
func TestDescribeRenamesOnlyTheTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	newest := f.months[len(f.months)-1]
	// The same column on every physical table and on one server's orders.
	for _, b := range []*sqltest.Backend{f.hot, f.cold, f.one} {
		tables := []string{"orders"}
		if b != f.one {
			tables = nil
			for i, m := range f.months {
				if (b == f.hot) == (i >= 2) {
					tables = append(tables, m)
				}
			}
		}
		for _, table := range tables {
			mustExec(t, b.DB, "ALTER TABLE "+table+" ADD COLUMN src VARCHAR(20) NOT NULL DEFAULT '"+newest+"' COMMENT '"+newest+"', ADD KEY `"+newest+"` (src) COMMENT '"+newest+"'")
		}
	}
	for _, q := range []string{
		"DESCRIBE orders",
		"SHOW FULL COLUMNS FROM orders",
		"SHOW COLUMNS FROM orders LIKE 'src'",
		"SHOW INDEX FROM orders",
		"SHOW CREATE TABLE orders",
	} {
		_, want := readText(t, f.one.DB, q)
		_, got := readText(t, f.db, q)
		if strings.HasPrefix(q, "SHOW INDEX") {
			for _, rs := range [][][]string{got, want} {
				for _, r := range rs {
					r[6] = "" // Cardinality: the server's estimate
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %q, one server %q", q, got, want)
		}
		if !strings.Contains(strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(strings.Join(flatten(want), " "), "`", " "), " ")), " "), newest) {
			t.Errorf("%s: one server's answer does not hold %s: the case shows nothing", q, newest)
		}
	}
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS and @@warning_count right after a catalog
// statement obroute answered without a warning give what one server gives (none, where the
// statement before it gave some); after one that gave warnings (the rewritten statement's, which
// may not be one server's), or one obroute refused (no server ran it, one server would have
// given its own), they are refused, never answered with the statement's before it.
func TestCatalogDiagnostics(t *testing.T) {
	f := newLogicalFixture(t, nil)
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	conns := sideConns(t, f)
	for _, q := range []string{
		"SELECT 1 + 'x'", // a warning of its own before
		"SHOW TABLES",
		"SHOW WARNINGS",
		"SHOW ERRORS",
		"SHOW COUNT(*) WARNINGS",
		"SELECT @@warning_count, @@error_count",
		"SELECT 1 + 'y'",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1 LIMIT 1",
		"SHOW WARNINGS",
		"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
		"SHOW WARNINGS",
		"SELECT @@warning_count",
		"DESCRIBE orders",
		"SHOW WARNINGS",
	} {
		got, want := bothSides(t, f, conns, dbs, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %q, one server %q", q, got, want)
		}
	}
	conn := conns[f.db]
	refused := func(after string) {
		t.Helper()
		for _, q := range []string{"SHOW WARNINGS", "SHOW ERRORS", "SELECT @@warning_count", "SHOW COUNT(*) ERRORS"} {
			if rows, err := conn.QueryContext(t.Context(), q); err == nil {
				t.Errorf("%s after %s: %q, want a refusal", q, after, dump(t, rows))
			} else if !errors.Is(err, connector.ErrSessionState) {
				t.Errorf("%s after %s: %v, want ErrSessionState", q, after, err)
			}
		}
	}
	// Warnings of the rewritten statement.
	rows, err := conn.QueryContext(t.Context(), "SELECT TABLE_NAME, TABLE_NAME + 0 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'items'")
	if err != nil {
		t.Fatal(err)
	}
	dump(t, rows)
	refused("a catalog statement with warnings")
	// Refused: the diagnostics are no server's.
	if _, err := conn.ExecContext(t.Context(), "SELECT 1 + 'x'"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.QueryContext(t.Context(), "SELECT * FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"); !errors.Is(err, connector.ErrCatalog) {
		t.Fatalf("information_schema.TRIGGERS: %v, want ErrCatalog", err)
	}
	refused("a refused catalog statement")
	if _, err := conn.ExecContext(t.Context(), "SELECT 1 + 'x'"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.QueryContext(t.Context(), "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND NOT (TABLE_NAME <> 'a' OR 0)"); !errors.Is(err, connector.ErrCatalog) {
		t.Fatalf("a NOT over an OR: %v, want ErrCatalog", err)
	}
	refused("a catalog statement refused as it ran")
}

// inTx reports whether conn's session is in a transaction (@@in_transaction).
func inTx(t *testing.T, conn *sql.Conn) bool {
	t.Helper()
	var n int
	if err := conn.QueryRowContext(t.Context(), "SELECT @@in_transaction").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}
