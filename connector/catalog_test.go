package connector_test

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// database returns db's current database.
func database(t *testing.T, db *sql.DB) string {
	t.Helper()
	var name string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

// The catalog statements of the table, and those GORM's, goose's and bun's migrators and
// admin tools send, answer through obroute what one server holding every table under its
// logical name answers: the database's name aside (it is the default backend's through obroute).
func TestCatalogAnswersAsOneServer(t *testing.T) {
	f := newLogicalFixture(t, nil)
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	if dbs[f.db] != database(t, f.hot.DB) {
		t.Fatalf("DATABASE() through obroute is %s, want the default backend's %s", dbs[f.db], database(t, f.hot.DB))
	}
	for _, q := range []string{
		"SHOW TABLES",
		"SHOW FULL TABLES",
		"SHOW TABLES LIKE 'o%'",
		"SHOW TABLES LIKE 'ORD%'", // names compare in their case (lower_case_table_names=0)
		"SHOW FULL TABLES LIKE '%i%'",
		"SHOW TABLES WHERE `Tables_in_{db}` LIKE 'A%'",
		"SHOW FULL TABLES WHERE Table_type = 'VIEW'",
		"SHOW TABLES FROM `{db}`",
		"SHOW TABLES IN `{db}` LIKE 'audit\\_%'",
		"DESCRIBE orders",
		"DESC orders order_time",
		"EXPLAIN orders",
		"SHOW COLUMNS FROM orders",
		"SHOW FULL COLUMNS FROM orders",
		"SHOW COLUMNS FROM orders FROM `{db}` LIKE 'order%'",
		"SHOW FIELDS IN orders WHERE `Key` = 'PRI'",
		"SHOW INDEX FROM orders",
		"SHOW KEYS FROM orders WHERE Key_name = 'ix_time'",
		"SHOW CREATE TABLE orders",
		"SHOW CREATE TABLE audit_log",
		"DESCRIBE audit_log",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'audit_log' AND TABLE_SCHEMA = DATABASE()",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'orders' AND TABLE_SCHEMA = '{db}'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME LIKE 'orders%' AND TABLE_SCHEMA = DATABASE()",
		"SELECT table_name, table_type, engine, table_collation, table_comment FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name",
		"SELECT TABLE_NAME, TABLE_ROWS >= 0 FROM information_schema.TABLES t WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE' ORDER BY 1",
		"SELECT COUNT(*) FROM `information_schema`.`tables` WHERE 1 = 1 AND `table_name` = ? AND `table_schema` = database()",
		"SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'orders')",
		"SELECT (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders') AS n, (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()) t2, 1+1, ( SELECT MAX(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() )",
		"SELECT DISTINCT information_schema.TABLES.TABLE_NAME FROM information_schema.TABLES WHERE information_schema.TABLES.TABLE_SCHEMA = DATABASE() ORDER BY 1",
		// GORM's Migrator: HasTable, ColumnTypes, HasColumn, HasIndex.
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = '{db}' AND table_name = 'orders' AND table_type = 'BASE TABLE'",
		"SELECT column_name, column_default, is_nullable = 'YES', data_type, character_maximum_length, column_type, column_key, extra, column_comment, numeric_precision, numeric_scale, datetime_precision FROM information_schema.columns WHERE table_schema = '{db}' AND table_name = 'orders' ORDER BY ORDINAL_POSITION",
		"SELECT count(*) FROM INFORMATION_SCHEMA.columns WHERE table_schema = '{db}' AND table_name = 'orders' AND column_name = 'amount'",
		"SELECT count(*) FROM information_schema.statistics WHERE table_schema = '{db}' AND table_name = 'orders' AND index_name = 'ix_time'",
		"SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, INDEX_TYPE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1, 2, 3",
		"SELECT c.TABLE_NAME, c.COLUMN_NAME FROM information_schema.COLUMNS c JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME WHERE c.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE' ORDER BY 1, c.ORDINAL_POSITION",
		"SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 2, 1",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'id') ORDER BY 1",
	} {
		t.Run(q, func(t *testing.T) {
			var got, want [][]string
			var gotCols, wantCols []string
			for _, side := range []*sql.DB{f.db, f.one.DB} {
				var args []any
				if strings.Contains(q, "?") {
					args = append(args, "orders")
				}
				cols, rows := readText(t, side, strings.ReplaceAll(q, "{db}", dbs[side]), args...)
				for i := range cols {
					cols[i] = strings.ReplaceAll(cols[i], dbs[side], "{db}")
				}
				for _, r := range rows {
					for i := range r {
						r[i] = strings.ReplaceAll(r[i], dbs[side], "{db}")
					}
				}
				if side == f.db {
					got, gotCols = rows, cols
				} else {
					want, wantCols = rows, cols
				}
			}
			if strings.HasPrefix(q, "SHOW INDEX") || strings.HasPrefix(q, "SHOW KEYS") {
				for _, rs := range [][][]string{got, want} {
					for _, r := range rs {
						r[6] = "" // Cardinality: the server's estimate
					}
				}
			}
			var args []any
			if strings.Contains(q, "?") {
				args = append(args, "orders")
			}
			if got, want := typesOf(t, f.db, strings.ReplaceAll(q, "{db}", dbs[f.db]), args...), typesOf(t, f.one.DB, strings.ReplaceAll(q, "{db}", dbs[f.one.DB]), args...); !reflect.DeepEqual(got, want) {
				t.Errorf("column types %v, one server's %v", got, want)
			}
			if !reflect.DeepEqual(gotCols, wantCols) {
				t.Errorf("columns %q, one server's %q", gotCols, wantCols)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rows through obroute:\n%q\none server:\n%q", got, want)
			}
			if len(want) == 0 && !strings.Contains(q, "'ORD%'") {
				t.Errorf("the reference answers no row: the case shows nothing")
			}
		})
	}
}

// information_schema tables that name tables and that obroute does not map are refused.
func TestCatalogRefusesWhatItCannotMap(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, q := range []string{
		"SELECT * FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()",
		"CREATE TABLE copy_of_tables AS SELECT TABLE_NAME FROM information_schema.TABLES",
	} {
		_, err := f.db.Exec(q)
		if !errors.Is(err, connector.ErrCatalog) {
			t.Errorf("%s: %v, want ErrCatalog", q, err)
		}
	}
	// information_schema's tables without their database, in a session whose database is
	// information_schema, would be one backend's.
	conn, err := f.db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "USE information_schema"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.QueryContext(t.Context(), "SELECT TABLE_NAME FROM TABLES WHERE TABLE_SCHEMA = 'x'"); !errors.Is(err, connector.ErrCatalog) {
		t.Errorf("TABLES unqualified in information_schema: %v, want ErrCatalog", err)
	}
	if _, err := conn.QueryContext(t.Context(), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'x'"); !errors.Is(err, connector.ErrCatalog) {
		t.Errorf("a catalog statement in a session of information_schema: %v, want ErrCatalog", err)
	}
	// A backend hint still reaches the physical tables.
	_, rows := readText(t, f.db, "/*+ OBROUTE(backend=cold) */ SHOW TABLES")
	if fmt.Sprint(rows) != "[[audit_log] [orders_202609] [orders_202610]]" {
		t.Errorf("SHOW TABLES on cold by a backend hint: %v", rows)
	}
}

// go-sql-test's clean-up, through a DSN that routes its tables to a second backend: SHOW TABLES,
// then DROP TABLE of each listed table with the suite's prefix, leaves no table behind on any
// backend, as with one server.
func TestShowTablesCleanupAcrossBackends(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	const prefix = "gosqltest_"
	c, err := connector.New(&config.Config{
		Backends: []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "cold", Role: "cold", DSN: cold.DSN}},
		Routes:   map[string]string{prefix + "foo": "cold", prefix + "bar": "cold"},
	})
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	for _, name := range []string{"foo", "bar", "baz"} { // baz: on the default backend
		mustExec(t, db, "create table "+prefix+name+" (id integer primary key, name varchar(50))")
	}
	mustExec(t, hot.DB, "CREATE TABLE other (id INT)")
	mustExec(t, cold.DB, "CREATE TABLE cold_only (id INT)") // not routed: not in the logical view
	_, listed := readText(t, db, "SHOW TABLES")
	if fmt.Sprint(listed) != "[[gosqltest_bar] [gosqltest_baz] [gosqltest_foo] [other]]" {
		t.Fatalf("SHOW TABLES: %v", listed)
	}
	rows, err := db.Query("SHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	var drop []string
	for rows.Next() {
		var table string
		if rows.Scan(&table) == nil && strings.HasPrefix(strings.ToLower(table), prefix) {
			drop = append(drop, table)
		}
	}
	rows.Close()
	for _, table := range drop {
		mustExec(t, db, "DROP TABLE "+table)
	}
	_, listed = readText(t, db, "SHOW TABLES")
	if fmt.Sprint(listed) != "[[other]]" {
		t.Errorf("SHOW TABLES after the clean-up: %v", listed)
	}
	for _, b := range []*sqltest.Backend{hot, cold} {
		_, left := readText(t, b.DB, "SHOW TABLES LIKE 'gosqltest\\_%'")
		if len(left) != 0 {
			t.Errorf("tables left on %s: %v", b.Name, left)
		}
	}
}

// typesOf returns the database type, length and nullability of each column of query's result.
func typesOf(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ct := range cts {
		n, _ := ct.Length()
		null, _ := ct.Nullable()
		out = append(out, fmt.Sprintf("%s(%d) null=%v", ct.DatabaseTypeName(), n, null))
	}
	return out
}

// SHOW TABLE STATUS lists the logical tables with the columns one server gives; a time-sharded
// table's row statistics are the sum of its physical tables'.
func TestShowTableStatus(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, side := range []*sql.DB{f.db, f.one.DB, f.hot.DB, f.cold.DB} {
		mustExec(t, side, "ANALYZE TABLE items")
	}
	for i, name := range f.months {
		mustExec(t, f.backendOf(i).DB, "ANALYZE TABLE "+name)
	}
	gotCols, got := readText(t, f.db, "SHOW TABLE STATUS")
	wantCols, want := readText(t, f.one.DB, "SHOW TABLE STATUS")
	if !reflect.DeepEqual(gotCols, wantCols) {
		t.Errorf("columns %v, one server's %v", gotCols, wantCols)
	}
	names := func(rows [][]string) (out []string) {
		for _, r := range rows {
			out = append(out, r[0]+" "+r[1]) // Name, Engine
		}
		return out
	}
	if !reflect.DeepEqual(names(got), names(want)) {
		t.Errorf("tables %v, one server's %v", names(got), names(want))
	}
	var sum, rows int64
	for i, name := range f.months {
		var n int64
		if err := f.backendOf(i).DB.QueryRow("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if err := f.db.QueryRow("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'").Scan(&rows); err != nil || rows != sum || sum == 0 {
		t.Errorf("orders' TABLE_ROWS through obroute: %d (%v), the sum of its physical tables' %d", rows, err, sum)
	}
	_, like := readText(t, f.db, "SHOW TABLE STATUS LIKE 'orders'")
	if len(like) != 1 || like[0][4] != fmt.Sprint(sum) {
		t.Errorf("SHOW TABLE STATUS LIKE 'orders': %v, want one row with Rows %d", like, sum)
	}
}

// The catalog's temporary tables are obroute's own: a catalog statement inside a READ ONLY
// transaction (where MariaDB creates no temporary table) is refused and leaves nothing behind,
// and the client session's own temporary table named as obroute's once were (obroute_catalog_…)
// is neither taken nor dropped by a catalog statement; SHOW TABLES and the catalog show what
// one server shows.
func TestCatalogTemporaryTablesStayObroutes(t *testing.T) {
	f := newLogicalFixture(t, nil)
	ctx := t.Context()
	type step struct {
		q       string
		refused bool // through obroute: refused with ErrCatalog where one server answers
	}
	steps := []step{
		{q: "START TRANSACTION READ ONLY"},
		{q: "SELECT COUNT(*) FROM orders WHERE order_time >= '2026-12-01'"},
		{q: "SHOW TABLES", refused: true},
		{q: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1", refused: true},
		{q: "COMMIT"},
		{q: "CREATE TEMPORARY TABLE obroute_catalog_tables (x INT)"},
		{q: "INSERT INTO obroute_catalog_tables VALUES (7)"},
		{q: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"},
		{q: "SHOW FULL TABLES"},
		{q: "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1, ORDINAL_POSITION"},
		{q: "SELECT * FROM obroute_catalog_tables"},
		{q: "DROP TEMPORARY TABLE obroute_catalog_tables"},
		{q: "CREATE TEMPORARY TABLE obroute_catalog_columns AS SELECT 1 AS y"},
		{q: "SELECT * FROM obroute_catalog_columns"},
	}
	var got, want []string
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		conn, err := side.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			rows, err := conn.QueryContext(ctx, s.q)
			var out string
			switch {
			case err != nil && side == f.db && s.refused && errors.Is(err, connector.ErrCatalog):
				out = "refused"
			case err != nil:
				out = "error " + err.Error()
			default:
				var r [][]string
				for rows.Next() {
					cols, _ := rows.Columns()
					vals := make([]sql.RawBytes, len(cols))
					dest := make([]any, len(cols))
					for i := range vals {
						dest[i] = &vals[i]
					}
					if err := rows.Scan(dest...); err != nil {
						t.Fatal(err)
					}
					var row []string
					for _, v := range vals {
						row = append(row, string(v))
					}
					r = append(r, row)
				}
				out = fmt.Sprint(r)
				if err := rows.Err(); err != nil {
					out += " error " + err.Error()
				}
				rows.Close()
			}
			if side == f.db {
				got = append(got, s.q+": "+out)
			} else {
				if s.refused && side != f.db {
					if strings.HasPrefix(out, "error") {
						t.Fatalf("%s on one server: %s", s.q, out)
					}
					out = "refused"
				}
				want = append(want, s.q+": "+out)
			}
		}
		conn.Close()
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("through obroute %s\none server     %s", got[i], want[i])
		}
	}
	// A read-only transaction of database/sql's own.
	tx, err := f.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Query("SHOW TABLES"); !errors.Is(err, connector.ErrCatalog) {
		t.Errorf("SHOW TABLES in BeginTx(ReadOnly): %v, want ErrCatalog", err)
	}
	tx.Rollback()
}

// Catalog reads the catalog does not map by itself (information_schema inside SET, inside the
// WHERE of a SHOW, joined, the tables of the InnoDB and lock views, SHOW OPEN TABLES and
// TRIGGERS) answer what one server answers or are refused, never with the physical tables.
func TestCatalogUnmappedFormsAnswerOrRefuse(t *testing.T) {
	f := newLogicalFixture(t, nil)
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	for _, q := range [][]string{
		{"SET @x = (SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE())", "SELECT @x"},
		{"SET @x = (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders')", "SELECT @x"},
		{"SELECT (SELECT GROUP_CONCAT(TABLE_NAME ORDER BY 1) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()) INTO @y", "SELECT @y"},
		{"SHOW TABLES WHERE `Tables_in_{db}` IN (SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'amount')"},
		{"SHOW FULL TABLES WHERE `Tables_in_{db}` NOT IN (SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'VIEW')"},
		{"SHOW TABLE STATUS WHERE Name IN (SELECT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME = 'ix_time')"},
		{"SELECT t.TABLE_NAME, k.COLUMN_NAME FROM information_schema.TABLES t JOIN information_schema.KEY_COLUMN_USAGE k ON k.TABLE_SCHEMA = t.TABLE_SCHEMA AND k.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = DATABASE() ORDER BY 1, 2"},
		{"SELECT TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1, 2"},
		{"SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()"},
		{"SELECT TABLE_NAME, PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"},
		{"SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"},
		{"SELECT COUNT(*) FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME LIKE CONCAT(DATABASE(), '/%')"},
		{"SELECT COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE WHERE TABLE_NAME LIKE CONCAT('`', DATABASE(), '`.%')"},
		{"SHOW OPEN TABLES FROM `{db}`"},
		{"SHOW TRIGGERS"},
	} {
		t.Run(q[0], func(t *testing.T) {
			var got, want string
			for _, side := range []*sql.DB{f.db, f.one.DB} {
				conn, err := side.Conn(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, s := range q {
					s = strings.ReplaceAll(s, "{db}", dbs[side])
					rows, err := conn.QueryContext(t.Context(), s)
					if err != nil {
						if side == f.db && errors.Is(err, connector.ErrCatalog) {
							out = append(out, "refused")
							break
						}
						t.Fatalf("%s: %v", s, err)
					}
					r := dump(t, rows)
					out = append(out, strings.ReplaceAll(fmt.Sprint(r), dbs[side], "{db}"))
				}
				if side == f.db {
					got = fmt.Sprint(out)
				} else {
					want = fmt.Sprint(out)
				}
				conn.Close()
			}
			if got != want && got != "[refused]" {
				t.Errorf("through obroute %s, one server %s", got, want)
			}
		})
	}
}

// dump reads rows as text, then closes them.
func dump(t *testing.T, rows *sql.Rows) [][]string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		var r []string
		for _, v := range vals {
			r = append(r, string(v))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// information_schema's tables are looked up by TABLE_NAME = … and TABLE_SCHEMA = … in the names'
// case (lower_case_table_names=0), while LIKE and functions of the names compare in any case:
// through obroute as on one server.
func TestCatalogNameCase(t *testing.T) {
	f := newLogicalFixture(t, nil)
	var lower int
	if err := f.one.DB.QueryRow("SELECT @@lower_case_table_names").Scan(&lower); err != nil || lower != 0 {
		t.Skipf("lower_case_table_names=%d: names compare in any case", lower)
	}
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	for _, q := range []string{
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ORDERS'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'Audit_Log'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
		"SELECT COUNT(*) FROM information_schema.tables t WHERE t.table_schema = '{db}' AND t.`TABLE_NAME` IN ('ORDERS', 'items')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('ORDERS')",
		"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME = 'Orders')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = UPPER('{db}')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'ORDERS'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND UPPER(TABLE_NAME) = 'AUDIT_LOG'",
		"SELECT TABLE_NAME = 'ORDERS' FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME",
		"SHOW TABLES LIKE 'ORDERS'",
		"SHOW TABLES LIKE 'Audit%'",
	} {
		var got, want [][]string
		for _, side := range []*sql.DB{f.db, f.one.DB} {
			_, rows := readText(t, side, strings.ReplaceAll(q, "{db}", dbs[side]))
			if side == f.db {
				got = rows
			} else {
				want = rows
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %v, one server %v", q, got, want)
		}
	}
}

// FOUND_ROWS() after a catalog statement is what one server gives: the catalog's answer is one
// SELECT of one server session, so SQL_CALC_FOUND_ROWS counts its rows without LIMIT, and rows
// closed before their end count all the server sent.
func TestCatalogFoundRows(t *testing.T) {
	f := newLogicalFixture(t, nil)
	steps := []struct {
		q       string
		readOne bool // read one row only, then close
	}{
		{q: "SELECT SQL_CALC_FOUND_ROWS TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1 LIMIT 1"},
		{q: "SELECT FOUND_ROWS()"},
		{q: "SELECT SQL_CALC_FOUND_ROWS COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' LIMIT 1, 1"},
		{q: "SELECT FOUND_ROWS()"},
		{q: "SHOW TABLES", readOne: true},
		{q: "SELECT FOUND_ROWS()"},
		{q: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1", readOne: true},
		{q: "SELECT FOUND_ROWS()"},
	}
	var got, want []string
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		conn, err := side.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			rows, err := conn.QueryContext(t.Context(), s.q)
			if err != nil {
				t.Fatalf("%s: %v", s.q, err)
			}
			var out []string
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				out = append(out, v)
				if s.readOne {
					break
				}
			}
			if err := rows.Err(); err != nil {
				out = append(out, "error "+err.Error())
			}
			rows.Close()
			if side == f.db {
				got = append(got, s.q+": "+fmt.Sprint(out))
			} else {
				want = append(want, s.q+": "+fmt.Sprint(out))
			}
		}
		conn.Close()
	}
	if want[1] != "SELECT FOUND_ROWS(): [4]" || want[3] != "SELECT FOUND_ROWS(): [3]" {
		t.Fatalf("one server: %q", want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("through obroute %s\none server     %s", got[i], want[i])
		}
	}
}

// SHOW … FROM the application's database answers for the logical tables wherever the client
// session's statements run: in a transaction bound to another backend (whose server session is
// in its own database) as outside it. In another current database, where obroute maps nothing,
// a read of the application's database's tables is refused rather than answered with its
// physical tables.
func TestCatalogOfTheApplicationsDatabase(t *testing.T) {
	f := newLogicalFixture(t, nil)
	other := sqltest.Shared(t, "other")[0]
	dbs := map[*sql.DB]string{f.db: database(t, f.db), f.one.DB: database(t, f.one.DB)}
	run := func(conn *sql.Conn, side *sql.DB, q string) ([][]string, error) {
		rows, err := conn.QueryContext(t.Context(), strings.ReplaceAll(q, "{db}", dbs[side]))
		if err != nil {
			return nil, err
		}
		out := dump(t, rows)
		for _, r := range out {
			for i := range r {
				r[i] = strings.ReplaceAll(r[i], dbs[side], "{db}")
			}
		}
		return out, nil
	}
	conns := map[*sql.DB]*sql.Conn{}
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		conn, err := side.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns[side] = conn
	}
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO audit_log VALUES (3, 'three')", // the transaction is cold's
		"SHOW TABLES FROM `{db}`",
		"SHOW FULL TABLES IN `{db}` LIKE 'o%'",
		"SHOW TABLE STATUS FROM `{db}` WHERE Name = 'audit_log'",
		"COMMIT",
	} {
		var got, want [][]string
		for _, side := range []*sql.DB{f.db, f.one.DB} {
			rows, err := run(conns[side], side, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if strings.HasPrefix(q, "SHOW TABLE STATUS") {
				for i := range rows {
					rows[i] = rows[i][:2] // Name, Engine: the statistics are the servers'
				}
			}
			if side == f.db {
				got = rows
			} else {
				want = rows
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %v, one server %v", q, got, want)
		}
		if strings.HasPrefix(q, "SHOW") && len(want) == 0 {
			t.Errorf("%s: one server answers no row", q)
		}
	}
	if _, err := conns[f.db].ExecContext(t.Context(), "USE `"+database(t, other.DB)+"`"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SHOW TABLES FROM `{db}`",
		"SHOW TABLE STATUS IN `{db}`",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}' ORDER BY 1",
	} {
		if _, err := run(conns[f.db], f.db, q); !errors.Is(err, connector.ErrCatalog) {
			t.Errorf("%s in another database: %v, want ErrCatalog", q, err)
		}
	}
	// The other databases are the server's.
	if rows, err := run(conns[f.db], f.db, "SHOW TABLES FROM mysql LIKE 'db'"); err != nil || fmt.Sprint(rows) != "[[db]]" {
		t.Errorf("SHOW TABLES FROM mysql LIKE 'db': %v %v", rows, err)
	}
	if rows, err := run(conns[f.db], f.db, "SHOW TABLES"); err != nil || len(rows) != 0 {
		t.Errorf("SHOW TABLES in the other, empty database: %v %v", rows, err)
	}
}

// The server looks tables up by the names a WHERE compares TABLE_NAME or TABLE_SCHEMA with
// (=, <=>, a one-value IN; the constant on either side), in their case, only where the WHERE or
// an inner join's ON holds the comparison through ANDs: under an OR or XOR, in a LEFT JOIN's ON,
// or against another column, the names compare in the column's collation, in any case. With
// tables items and ITEMS, obroute answers as one server.
func TestCatalogLookupsAsTheServerReadsThem(t *testing.T) {
	f := newLogicalFixture(t, nil)
	var lower int
	if err := f.one.DB.QueryRow("SELECT @@lower_case_table_names").Scan(&lower); err != nil || lower != 0 {
		t.Skipf("lower_case_table_names=%d: names compare in any case", lower)
	}
	for _, b := range []*sqltest.Backend{f.hot, f.one} {
		mustExec(t, b.DB, "CREATE TABLE ITEMS (x INT)")
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME = 'Items' OR TABLE_NAME = 'zz')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'Items' OR TABLE_NAME = 'zz'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'Items' XOR 0",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <=> 'ITEMS'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND 'ITEMS' = TABLE_NAME",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME = 'Items' AND 1 = 1)",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_ROWS BETWEEN 0 AND 1000000 AND TABLE_NAME = 'Items' AND TABLE_SCHEMA = DATABASE()",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = (SELECT 'Items')",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = CONCAT('It', 'ems')",
		"SELECT t.TABLE_NAME, c.COLUMN_NAME FROM information_schema.TABLES t JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME LIKE 'items'",
		"SELECT t.TABLE_NAME, c.COLUMN_NAME FROM information_schema.TABLES t, information_schema.COLUMNS c WHERE c.TABLE_NAME = t.TABLE_NAME AND t.TABLE_SCHEMA = DATABASE() AND c.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME LIKE 'items'",
		"SELECT COUNT(*) FROM information_schema.TABLES t JOIN information_schema.COLUMNS c ON c.TABLE_NAME = 'Items' AND c.TABLE_SCHEMA = t.TABLE_SCHEMA WHERE t.TABLE_SCHEMA = DATABASE()",
		"SELECT COUNT(*) FROM information_schema.TABLES t LEFT JOIN information_schema.COLUMNS c ON c.TABLE_NAME = 'Items' AND c.TABLE_SCHEMA = t.TABLE_SCHEMA WHERE t.TABLE_SCHEMA = DATABASE()",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'Items'",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('Items')",
	} {
		var got, want []string
		for _, side := range []*sql.DB{f.db, f.one.DB} {
			_, rows := readText(t, side, q)
			var out []string
			for _, r := range rows {
				out = append(out, strings.Join(r, " "))
			}
			slices.Sort(out) // the names tie in the collation: their order is the server's
			if side == f.db {
				got = out
			} else {
				want = out
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through obroute %v, one server %v", q, got, want)
		}
	}
}
