package connector_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// Attacks on the logical view of issue 24 (catalog, DESCRIBE, DDL on logical tables): each
// statement through obroute against one server holding the logical tables under their names.

// answer24 runs q on conn ({db} the side's database) and returns its rows as text, or its error
// ("error <number>: <message>" for the server's, "refused: <message>" for obroute's own), with the
// side's database written {db}.
func answer24(t *testing.T, conn *sql.Conn, db, q string) string {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), strings.ReplaceAll(q, "{db}", db))
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return strings.ReplaceAll(fmt.Sprintf("error %d: %s", me.Number, me.Message), db, "{db}")
		}
		return "refused: " + err.Error()
	}
	return strings.ReplaceAll(fmt.Sprintf("%q", dump(t, rows)), db, "{db}")
}

// answerErr is err as answer24 writes it.
func answerErr(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d: %s", me.Number, me.Message)
	}
	return "refused: " + err.Error()
}

// reconnect24 replaces f's obroute handle by one with routes and the shard metadata of the first
// months monthly tables of orders from 2026-09 (the fixture's four, then tables made ahead on
// hot), at the fixture's clock.
func reconnect24(t *testing.T, f *logicalFixture, routes map[string]string, months int) {
	t.Helper()
	var tables metadata.StaticSource
	for i := range months {
		from := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0)
		tables = append(tables, metadata.Table{Name: "orders_" + from.Format("200601"), Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: i >= 2})
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: f.hot.DSN}, {Name: "cold", Role: "cold", DSN: f.cold.DSN}},
		Routes:     routes,
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}}},
	}
	now := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	f.c, f.db = c, sql.OpenDB(c)
	t.Cleanup(func() { f.db.Close() })
}

// steps24 runs the statements through obroute and on the reference server, each on one
// connection, and reports every statement whose answers differ; refusable are the statements
// for which an obroute refusal (an error of obroute's own, not the server's) is an answer.
func steps24(t *testing.T, f *logicalFixture, refusable map[string]bool, qs ...string) {
	t.Helper()
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	conns := sideConns(t, f)
	for _, q := range qs {
		got := answer24(t, conns[f.db], dbs[f.db], q)
		want := answer24(t, conns[f.one.DB], dbs[f.one.DB], q)
		if got == want || refusable[q] && strings.HasPrefix(got, "refused: ") {
			continue
		}
		t.Errorf("%s\nthrough obroute: %s\none server:      %s", q, got, want)
	}
}

// PREPARE … FROM a catalog statement prepares it, as on one server, and EXECUTE runs it. Through
// obroute (once the shard metadata is loaded: before, the PREPARE is refused for want of it) the
// PREPARE ran the catalog statement itself and prepared nothing: PREPARE s1 FROM 'SHOW TABLES'
// answered SHOW TABLES' rows and EXECUTE s1 failed with 1243 (unknown handler); with a ? in the
// text the rewritten catalog statement ran without its argument (1064 near '?'), and so did
// EXECUTE IMMEDIATE … USING 'orders'. A refused PREPARE is an answer (its EXECUTE is then not
// compared).
func TestAttack24PrepareOfACatalogStatement(t *testing.T) {
	f := newLogicalFixture(t, nil)
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	conns := sideConns(t, f)
	refused := false
	for _, q := range []string{
		"SHOW TABLES", // the shard metadata is loaded
		"PREPARE s1 FROM 'SHOW TABLES'",
		"EXECUTE s1",
		"PREPARE s2 FROM 'SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?'",
		"EXECUTE s2 USING 'orders'",
		"EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?' USING 'orders'",
	} {
		if strings.HasPrefix(q, "EXECUTE s") && refused {
			continue
		}
		got := answer24(t, conns[f.db], dbs[f.db], q)
		want := answer24(t, conns[f.one.DB], dbs[f.one.DB], q)
		refused = strings.HasPrefix(got, "refused: ")
		if got != want && !(refused && q != "SHOW TABLES") {
			t.Errorf("%s\nthrough obroute: %s\none server:      %s", q, got, want)
		}
	}
}

// CREATE VIEW under the name of a logical table fails on one server (1050: the table exists).
// Through obroute it succeeded: CREATE VIEW orders made a view orders on the default backend
// (the object the issue calls the dangerous one: a physical orders beside the logical one; a
// CREATE TRIGGER … ON orders then met it: 1347 "is not of type 'BASE TABLE'"), and CREATE VIEW
// audit_log made a view audit_log on the default backend, which the routed table hides; CREATE OR
// REPLACE VIEW orders (1347 on one server: orders is not a view) replaced it.
func TestAttack24CreateViewUnderALogicalName(t *testing.T) {
	f := newLogicalFixture(t, nil)
	refusable := map[string]bool{"CREATE VIEW orders AS SELECT 1 AS x": true, "CREATE VIEW audit_log AS SELECT 1 AS x": true,
		"CREATE OR REPLACE VIEW orders AS SELECT 2 AS x": true}
	steps24(t, f, refusable,
		"CREATE VIEW orders AS SELECT 1 AS x",
		"CREATE VIEW audit_log AS SELECT 1 AS x",
		"CREATE OR REPLACE VIEW orders AS SELECT 2 AS x",
		"SHOW FULL TABLES",
	)
	for _, name := range []string{"orders", "audit_log"} {
		var n int
		if err := f.hot.DB.QueryRow("SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("the default backend holds a view %s, named as a table of the logical view", name)
		}
	}
}

// A table or view made from a routed table (CREATE VIEW … AS SELECT … FROM audit_log, CREATE
// TABLE … AS SELECT, CREATE TABLE … LIKE audit_log: pt-online-schema-change's first step; a table
// with a foreign key REFERENCES audit_log) is a table of the database on one server: SHOW TABLES
// lists it and a SELECT reads it. Through obroute each was created on cold (the routed table's
// backend), where the new name has no route: SHOW TABLES did not list it and a SELECT of it failed
// with 1146. obroute refuses each (ErrLogicalTable, naming the route to add and the backend hint),
// and cold holds none of them.
func TestAttack24TablesMadeFromARoutedTableAreLost(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for q, name := range map[string]string{
		"CREATE VIEW audit_v AS SELECT id FROM audit_log":                               "audit_v",
		"CREATE TABLE audit_copy AS SELECT * FROM audit_log":                            "audit_copy",
		"CREATE TABLE audit_log_new LIKE audit_log":                                     "audit_log_new",
		"CREATE TABLE audit_child (id INT, FOREIGN KEY (id) REFERENCES audit_log (id))": "audit_child",
	} {
		_, err := f.db.Exec(q)
		if !errors.Is(err, connector.ErrLogicalTable) || !strings.Contains(err.Error(), "add the route "+name+": cold") || !strings.Contains(err.Error(), "OBROUTE(backend=cold)") {
			t.Errorf("%s through obroute: %v; want ErrLogicalTable naming the route %s: cold and the backend hint", q, err, name)
		}
		var n int
		if err := f.cold.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: cold holds %s, which no route reaches", q, name)
		}
	}
}

// SHOW FULL TABLES gives a system-versioned table the type BASE TABLE (information_schema.TABLES
// says SYSTEM VERSIONED): through obroute, which builds SHOW FULL TABLES from TABLES, its
// Table_type was SYSTEM VERSIONED, and DBeaver's `SHOW FULL TABLES WHERE Table_type = 'BASE
// TABLE'` did not list it.
func TestAttack24ShowFullTablesOfASystemVersionedTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, b := range []*sqltest.Backend{f.hot, f.one} {
		mustExec(t, b.DB, "CREATE TABLE prices (id INT PRIMARY KEY, amount INT) WITH SYSTEM VERSIONING")
	}
	steps24(t, f, nil,
		"SHOW FULL TABLES",
		"SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'",
		"SHOW FULL TABLES LIKE 'pri%'",
	)
}

// CREATE TABLE IF NOT EXISTS orders does nothing, as on one server, but one server leaves the
// note 1050 "Table 'orders' already exists" (GORM and goose read it as "nothing to do"): through
// obroute SHOW WARNINGS answered no row and @@warning_count 0, the no-op's diagnostics not
// being one server's (a statement before it with a warning shows the difference too).
func TestAttack24CreateTableIfNotExistsOfALogicalTableWarns(t *testing.T) {
	f := newLogicalFixture(t, nil)
	steps24(t, f, map[string]bool{"SHOW WARNINGS": true, "SELECT @@warning_count": true, "SHOW COUNT(*) WARNINGS": true},
		"CREATE TABLE IF NOT EXISTS orders (id INT)",
		"SHOW WARNINGS",
		"SELECT @@warning_count",
		"SELECT 1 + 'x'",
		"CREATE TABLE IF NOT EXISTS orders LIKE items",
		"SHOW COUNT(*) WARNINGS",
	)
}

// The logical table's row statistics are its physical tables' sum (README), in
// information_schema.TABLES; information_schema.PARTITIONS, which GORM-style tools and DBeaver
// read for a table's size, gave the newest physical table's alone: TABLE_ROWS 3 where one server
// (and TABLES through obroute) says 12.
func TestAttack24PartitionsRowsOfALogicalTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		mustExec(t, side, "ANALYZE TABLE items")
	}
	mustExec(t, f.one.DB, "ANALYZE TABLE orders")
	for i, name := range f.months {
		mustExec(t, f.backendOf(i).DB, "ANALYZE TABLE "+name)
	}
	steps24(t, f, nil,
		"SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
		"SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
		"SELECT SUM(TABLE_ROWS) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('orders', 'audit_log')",
	)
}

// ANALYZE, CHECK, OPTIMIZE, REPAIR and CHECKSUM TABLE of a routed table answer rows whose Table
// column names the table in the client session's database on one server ({db}.audit_log):
// through obroute it named cold's database (sqltest_…_cold_….audit_log), which the client
// session never sees (DATABASE() and the catalog name the default backend's).
func TestAttack24MaintenanceOfARoutedTableNamesTheClientsDatabase(t *testing.T) {
	f := newLogicalFixture(t, nil)
	steps24(t, f, nil,
		"ANALYZE TABLE audit_log",
		"CHECK TABLE audit_log",
		"OPTIMIZE TABLE audit_log",
		"REPAIR TABLE audit_log",
		"CHECKSUM TABLE audit_log",
	)
}

// CREATE TEMPORARY TABLE t LIKE orders makes, on one server, a temporary table with orders'
// definition. Through obroute it ran on the default backend and failed with 1146 "Table
// '{db}.orders' doesn't exist": the logical table is said not to exist (CREATE TABLE … LIKE orders
// is refused with ErrLogicalTable; the TEMPORARY form is not).
func TestAttack24CreateTemporaryTableLikeALogicalTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	steps24(t, f, map[string]bool{"CREATE TEMPORARY TABLE tt LIKE orders": true, "DESCRIBE tt": true},
		"CREATE TEMPORARY TABLE tt LIKE orders",
		"DESCRIBE tt",
	)
}

// RENAME TABLE x TO audit_log, where audit_log (a routed table) exists, fails on one server with
// 1050 "Table 'audit_log' already exists". Through obroute the RENAME went to cold, the target's
// backend, and failed with 1146 naming cold's database: "Table
// 'sqltest_…_cold_….items2' doesn't exist", about a table that exists.
func TestAttack24RenameOntoARoutedTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	refusable := map[string]bool{"RENAME TABLE items2 TO audit_log": true, "ALTER TABLE items2 RENAME TO audit_log": true}
	steps24(t, f, refusable,
		"CREATE TABLE items2 (id INT)",
		"RENAME TABLE items2 TO audit_log",
		"ALTER TABLE items2 RENAME TO audit_log",
		"SHOW TABLES",
	)
}

// The logical table's AUTO_INCREMENT on one server is its counter, past every row (34 here).
// Through obroute SHOW CREATE TABLE and information_schema.TABLES (SHOW TABLE STATUS too) give the
// newest physical table's: with next month's table made ahead (as obroute metadata prepare
// makes it, CREATE TABLE … LIKE, its counter at 1), SHOW CREATE TABLE orders lost its
// AUTO_INCREMENT=34 and AUTO_INCREMENT read 1, a value of rows long written.
func TestAttack24AutoIncrementOfALogicalTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	// Ids from 1 (id 0 would be renumbered by the ALTER).
	mustExec(t, f.one.DB, "UPDATE orders SET id = id + 1 ORDER BY id DESC")
	mustExec(t, f.one.DB, "ALTER TABLE orders MODIFY id INT NOT NULL AUTO_INCREMENT")
	for i, name := range f.months {
		mustExec(t, f.backendOf(i).DB, "UPDATE "+name+" SET id = id + 1 ORDER BY id DESC")
		mustExec(t, f.backendOf(i).DB, "ALTER TABLE "+name+" MODIFY id INT NOT NULL AUTO_INCREMENT")
	}
	// Next month's table, made ahead on hot.
	mustExec(t, f.hot.DB, "CREATE TABLE orders_202701 LIKE "+f.months[3])
	reconnect24(t, f, map[string]string{"audit_log": "cold"}, 5)
	steps24(t, f, nil,
		"SELECT COUNT(*), MAX(id) FROM orders WHERE order_time >= '2026-09-01'",
		"SHOW CREATE TABLE orders",
		"SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
	)
}

// With tables items and ITEMS (lower_case_table_names=0) the server looks a table up by name,
// in its case, exactly where its optimizer sees a column of the catalog table compared by =
// with a constant: through a parenthesised column, a row comparison (as jOOQ and Hibernate
// write composite keys), an IN of a subquery without tables (made an =), an OR whose other side
// is false (OR FALSE, || 0: folded away), and the = and the lookup are the first conjunct's;
// under IS TRUE, IS NOT FALSE or = 1 there is no lookup and the names compare in the collation. obroute's rewrite read these otherwise: the lookups it
// missed answered 2 rows for one server's 1, those it made where the server makes none 1 for
// 2, and TABLE_NAME = 'ITEMS' AND TABLE_NAME = 'items' (both made case-sensitive) 0 for 1.
// A refusal (ErrCatalog) is an answer.
func TestAttack24CatalogLookupsTheRewriteMisreads(t *testing.T) {
	f := newLogicalFixture(t, nil)
	var lower int
	if err := f.one.DB.QueryRow("SELECT @@lower_case_table_names").Scan(&lower); err != nil || lower != 0 {
		t.Skipf("lower_case_table_names=%d: names compare in any case", lower)
	}
	for _, b := range []*sqltest.Backend{f.hot, f.one} {
		mustExec(t, b.DB, "CREATE TABLE ITEMS (x INT)")
	}
	const count = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
	for _, q := range []string{
		count + "(TABLE_NAME) = 'ITEMS'",
		count + "(TABLE_NAME, TABLE_TYPE) = ('ITEMS', 'BASE TABLE')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE (TABLE_SCHEMA, TABLE_NAME) IN ((DATABASE(), 'ITEMS'))",
		count + "TABLE_NAME IN (SELECT 'ITEMS')",
		count + "TABLE_NAME = 'ITEMS' AND TABLE_NAME = 'items'",
		count + "TABLE_NAME = 'ITEMS' IS TRUE",
		count + "TABLE_NAME = 'ITEMS' IS NOT FALSE",
		count + "TABLE_NAME = 'ITEMS' = 1",
		count + "TABLE_NAME = 'ITEMS' OR FALSE",
		count + "TABLE_NAME = 'ITEMS' || 0",
		"SELECT COUNT(*) FROM information_schema.TABLES t NATURAL JOIN information_schema.COLUMNS c WHERE t.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = 'ITEMS'",
	} {
		_, want := readText(t, f.one.DB, q)
		rows, err := f.db.Query(q)
		if errors.Is(err, connector.ErrCatalog) {
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got := dump(t, rows); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: through obroute %v, one server %v", q, got, want)
		}
	}
}

// A select item without alias is named by its text as written, also in a statement with ?
// arguments (goose's and bun's "does the table exist" probes take the name as an argument).
// Through obroute such an item holding a ? was named by the rewritten text, cut at the
// server's limit: "EXISTS (SELECT 1 FROM (select * from information_schema.TABLES where not
// (TABLE_SCHEMA <=> database()) and TABLE_SCHEMA not in ('sqltest_…_cold_…') union all select *
// from obroute_catalog_<tag>_tables) as `TABLES` WHERE binary ", naming cold's database and the
// catalog's temporary table (cold's database is there because the fixture's backends share a
// server; the temporary table's name is there on any).
func TestAttack24ColumnNamesOfCatalogItemsWithArguments(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, q := range []string{
		"SELECT EXISTS (SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?)",
		"SELECT (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?), 1",
	} {
		gotCols, got := readText(t, f.db, q, "orders")
		wantCols, want := readText(t, f.one.DB, q, "orders")
		if fmt.Sprint(gotCols) != fmt.Sprint(wantCols) {
			t.Errorf("%s: columns through obroute %q, one server %q", q, gotCols, wantCols)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: rows through obroute %q, one server %q", q, got, want)
		}
	}
}

// A view routed to cold (routes: audit_view: cold) is in the logical view: SHOW FULL TABLES lists
// it as a VIEW and a SELECT of it reads cold's. information_schema.VIEWS, which DBeaver and
// MySQL Workbench read for a database's views, is neither mapped nor refused: it answered the
// default backend's views only, without audit_view.
func TestAttack24RoutedViewInInformationSchemaViews(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, b := range []*sqltest.Backend{f.cold, f.one} {
		mustExec(t, b.DB, "CREATE VIEW audit_view AS SELECT id FROM audit_log")
	}
	reconnect24(t, f, map[string]string{"audit_log": "cold", "audit_view": "cold"}, len(f.months))
	steps24(t, f, map[string]bool{"SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1": true,
		"SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'audit_view'": true},
		"SHOW FULL TABLES WHERE Table_type = 'VIEW'",
		"SELECT * FROM audit_view ORDER BY id",
		"SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
		"SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'audit_view'",
	)
}

// Catalog tables that name tables and that obroute neither maps nor refuses answered the
// default backend's physical tables: information_schema.GEOMETRY_COLUMNS (GIS tools' list of
// spatial columns) named orders_202611 and orders_202612 and not audit_log; the sys schema's
// views over information_schema and performance_schema (sys.x$schema_flattened_keys, behind
// sys.schema_redundant_indexes, which DBAs run to find redundant indexes) named orders_202611
// and orders_202612 where one server names orders and audit_log. A refusal (ErrCatalog) is an
// answer.
func TestAttack24UnmappedCatalogTablesNamePhysicalTables(t *testing.T) {
	f := newLogicalFixture(t, nil)
	if _, err := f.one.DB.Exec("SELECT 1 FROM sys.version"); err != nil {
		t.Skipf("the server has no sys schema: %v", err)
	}
	mustExec(t, f.one.DB, "ALTER TABLE orders ADD COLUMN place POINT NULL")
	mustExec(t, f.one.DB, "ALTER TABLE audit_log ADD COLUMN place POINT NULL")
	mustExec(t, f.cold.DB, "ALTER TABLE audit_log ADD COLUMN place POINT NULL")
	for i, name := range f.months {
		mustExec(t, f.backendOf(i).DB, "ALTER TABLE "+name+" ADD COLUMN place POINT NULL")
	}
	refusable := map[string]bool{}
	qs := []string{
		"SELECT F_TABLE_NAME, F_GEOMETRY_COLUMN FROM information_schema.GEOMETRY_COLUMNS WHERE F_TABLE_SCHEMA = DATABASE() ORDER BY 1",
		"SELECT table_name, index_name FROM sys.x$schema_flattened_keys WHERE table_schema = DATABASE() ORDER BY 1, 2",
	}
	for _, q := range qs {
		refusable[q] = true
	}
	steps24(t, f, refusable, qs...)
}

// With sql_mode ANSI_QUOTES (sql_mode=ANSI, as PostgreSQL-minded tools set it) "…" is a name:
// SELECT … FROM "information_schema"."TABLES" and SHOW TABLES FROM "db" are catalog statements.
// obroute read "information_schema" as a string, did not see a catalog statement and sent both
// to the default backend as written: the physical tables orders_202611 and orders_202612
// were listed, orders and audit_log were not, and the count of orders was 0 for 1.
func TestAttack24CatalogUnderANSIQuotes(t *testing.T) {
	f := newLogicalFixture(t, nil)
	qs := []string{
		"SELECT COUNT(*) FROM \"information_schema\".\"TABLES\" WHERE \"TABLE_SCHEMA\" = DATABASE() AND \"TABLE_NAME\" = 'orders'",
		"SELECT TABLE_NAME FROM \"information_schema\".TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
		"SHOW TABLES FROM \"{db}\"",
		"SHOW FULL TABLES IN \"{db}\" LIKE 'o%'",
	}
	refusable := map[string]bool{}
	for _, q := range qs {
		refusable[q] = true
	}
	steps24(t, f, refusable, append([]string{"SET SESSION sql_mode = 'ANSI_QUOTES'"}, qs...)...)
}

// A trigger on a routed table is the database's on one server: SHOW CREATE TRIGGER shows it and
// DROP TRIGGER drops it. Through obroute CREATE TRIGGER … ON audit_log went to cold (the
// table's backend), but SHOW CREATE TRIGGER and DROP TRIGGER, which name no table, went to the
// default backend: 1360 "Trigger does not exist" for a trigger that exists, and DROP TRIGGER IF
// EXISTS (migration tools' form) answered success with a note and left the trigger on cold,
// firing on every insert. obroute refuses the CREATE TRIGGER (ErrLogicalTable, naming the
// backend hint that reaches cold), which makes no trigger; with the hint the trigger is made,
// shown and dropped on cold.
func TestAttack24TriggerOfARoutedTable(t *testing.T) {
	f := newLogicalFixture(t, nil)
	const create = "CREATE TRIGGER audit_trg AFTER INSERT ON audit_log FOR EACH ROW SET @fired = NEW.id"
	_, err := f.db.Exec(create)
	if !errors.Is(err, connector.ErrLogicalTable) || !strings.Contains(err.Error(), "OBROUTE(backend=cold)") {
		t.Fatalf("%s through obroute: %v; want ErrLogicalTable naming the backend hint", create, err)
	}
	triggers := func() int {
		var n int
		if err := f.cold.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = 'audit_trg'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := triggers(); n != 0 {
		t.Fatalf("the refused CREATE TRIGGER left %d triggers on cold", n)
	}
	const hinted = "/*+ OBROUTE(backend=cold) */ "
	mustExec(t, f.db, hinted+create)
	var name string
	if err := f.db.QueryRow(hinted+"SHOW CREATE TRIGGER audit_trg").Scan(&name, new(any), new(any), new(any), new(any), new(any), new(any)); err != nil || name != "audit_trg" {
		t.Errorf("SHOW CREATE TRIGGER audit_trg with the hint: %q, %v", name, err)
	}
	mustExec(t, f.db, hinted+"DROP TRIGGER IF EXISTS audit_trg")
	if n := triggers(); n != 0 {
		t.Errorf("DROP TRIGGER IF EXISTS audit_trg with the hint left the trigger on cold")
	}
}

// In another current database (USE staging, a database of the application's server holding a
// table orders of its own and copies of the physical tables, as a staging copy does), orders is
// that database's table on one server: SHOW TABLES lists it, DESCRIBE describes it, TRUNCATE
// TABLE empties it and nothing else. Through obroute orders stayed the time-sharded table:
// SHOW TABLES hid staging's orders, DESCRIBE went to staging.orders_202612, and ALTER and
// TRUNCATE fanned out to staging's orders_202609 … orders_202612, altering and emptying four
// tables one server never touches while staging.orders kept its row.
func TestAttack24AnotherDatabasesTableNamedAsTheLogicalOne(t *testing.T) {
	f := newLogicalFixture(t, nil)
	staging := sqltest.Shared(t, "stage", "stage1") // obroute's, one server's
	for _, s := range staging {
		mustExec(t, s.DB, "CREATE TABLE orders (z INT)")
		mustExec(t, s.DB, "INSERT INTO orders VALUES (7)")
		for _, m := range f.months {
			mustExec(t, s.DB, "CREATE TABLE "+m+" "+ordersDDL)
			mustExec(t, s.DB, "INSERT INTO "+m+" VALUES (1, '2026-01-01 00:00:00', 1)")
		}
	}
	conns := sideConns(t, f)
	names := map[*sql.DB]string{f.db: database(t, staging[0].DB), f.one.DB: database(t, staging[1].DB)}
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		if _, err := conns[side].ExecContext(t.Context(), "USE `"+names[side]+"`"); err != nil {
			t.Fatal(err)
		}
	}
	refusable := map[string]bool{"ALTER TABLE orders ADD COLUMN y INT": true, "TRUNCATE TABLE orders": true}
	for _, q := range []string{
		"SHOW TABLES LIKE 'orders'",
		"DESCRIBE orders",
		"ALTER TABLE orders ADD COLUMN y INT",
		"TRUNCATE TABLE orders",
		"SHOW COLUMNS FROM orders",
	} {
		got := answer24(t, conns[f.db], names[f.db], q)
		want := answer24(t, conns[f.one.DB], names[f.one.DB], q)
		if got != want && !(refusable[q] && strings.HasPrefix(got, "refused: ")) {
			t.Errorf("%s in another database\nthrough obroute: %s\none server:      %s", q, got, want)
		}
	}
	for _, m := range f.months {
		var n int
		if err := staging[0].DB.QueryRow("SELECT COUNT(*) FROM " + m).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("staging's %s holds %d rows after TRUNCATE TABLE orders in staging: one server leaves its row", m, n)
		}
		if cols := columnsOf(t, staging[0], m); len(cols) != 3 {
			t.Errorf("staging's %s has the columns %v after ALTER TABLE orders in staging: one server leaves it", m, cols)
		}
	}
}

// In another current database holding a table orders (and no physical tables), SHOW TABLES lists
// it on one server; through obroute, which hides a table named as a time-sharded one in any
// database, SHOW TABLES listed nothing, and DESCRIBE orders failed with 1146 on
// <that database>.orders_202612.
func TestAttack24ShowTablesInAnotherDatabaseHidesItsOrders(t *testing.T) {
	f := newLogicalFixture(t, nil)
	other := sqltest.Shared(t, "oth", "oth1") // obroute's, one server's
	conns := sideConns(t, f)
	names := map[*sql.DB]string{f.db: database(t, other[0].DB), f.one.DB: database(t, other[1].DB)}
	for i, side := range []*sql.DB{f.db, f.one.DB} {
		mustExec(t, other[i].DB, "CREATE TABLE orders (z INT)")
		if _, err := conns[side].ExecContext(t.Context(), "USE `"+names[side]+"`"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"SHOW TABLES", "SHOW FULL TABLES", "DESCRIBE orders"} {
		got := answer24(t, conns[f.db], names[f.db], q)
		want := answer24(t, conns[f.one.DB], names[f.one.DB], q)
		if got != want && !strings.HasPrefix(got, "refused: ") {
			t.Errorf("%s in another database\nthrough obroute: %s\none server:      %s", q, got, want)
		}
	}
}
