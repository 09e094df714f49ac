package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// inside is a static route (audit_log and its companions on cold), a time-sharded table orders
// (February and March 2025 on hot) and the reference: one server holding every table.
type inside struct {
	db             *sql.DB
	hot, cold, ref *sqltest.Backend
}

func newInside(t *testing.T) *inside {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	f := &inside{hot: bs[0], cold: bs[1], ref: bs[2]}
	for _, b := range []*sqltest.Backend{f.cold, f.ref} {
		b.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(20) NOT NULL)")
		b.Exec(t, "INSERT INTO audit_log VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')")
		b.Exec(t, "CREATE TABLE audit_archive (id INT PRIMARY KEY, note VARCHAR(20) NOT NULL)")
		b.Exec(t, "INSERT INTO audit_archive VALUES (1, 'x'), (3, 'y'), (7, 'z')")
		b.Exec(t, "CREATE PROCEDURE echo_n(IN n INT) SELECT n")
	}
	for _, b := range []*sqltest.Backend{f.hot, f.ref} {
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, n INT NOT NULL)")
		b.Exec(t, "INSERT INTO items VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)")
	}
	tables := monthTables(t, f.hot, "hot", true, "202502", "202503")
	f.hot.Exec(t, "INSERT INTO orders_202503 VALUES (1, '2025-03-10 10:00:00')")
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: f.hot.DSN}, {Name: "cold", Role: "cold", DSN: f.cold.DSN}},
		Routes:     map[string]string{"audit_log": "cold", "audit_archive": "cold", "audit_copy": "cold", "audit_view": "cold"},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	f.db = openAt(t, cfg, tables, time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC))
	f.db.SetMaxOpenConns(1) // one client session: the session's variables are seen by each statement
	return f
}

// same checks that the tables hold what the reference holds.
func (f *inside) same(t *testing.T, when string) {
	t.Helper()
	for table, b := range map[string]*sqltest.Backend{"audit_log": f.cold, "audit_archive": f.cold, "items": f.hot} {
		q := "SELECT * FROM " + table + " ORDER BY 1"
		if got, want := rowsOf(t, b.DB, q), rowsOf(t, f.ref.DB, q); !slices.Equal(got, want) {
			t.Errorf("%s: %s holds %v, one server %v", when, table, got, want)
		}
	}
}

// Statements that read or write a routed table in any clause — a SET's or a DO's subquery, a
// CALL argument, subqueries of INSERT, UPDATE and DELETE, CREATE TABLE … SELECT, CREATE VIEW,
// INSERT … SELECT, multi-table UPDATE and DELETE, HANDLER, LOAD DATA, SELECT … INTO, SHOW … FROM,
// CHECK and ANALYZE TABLE — run on that table's backend and give what one server holding every
// table gives. A SET's values computed there are kept as the client session's and replayed
// elsewhere: a statement on another backend, and the server session that replaces a lost one,
// see them.
func TestRoutedTableInsideOtherStatements(t *testing.T) {
	f := newInside(t)
	ctx := context.Background()
	conn, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	refConn, err := f.ref.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer refConn.Close()
	both := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := refConn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s on one server: %v", q, err)
		}
		f.same(t, q)
	}
	rowsBoth := func(q string) {
		t.Helper()
		got, err := connRows(ctx, conn, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want, err := connRows(ctx, refConn, q)
		if err != nil {
			t.Fatalf("%s on one server: %v", q, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, one server %v", q, got, want)
		}
	}
	both("SET @n = (SELECT COUNT(*) FROM audit_log), @first = (SELECT note FROM audit_log ORDER BY id LIMIT 1), @k = 2")
	rowsBoth("SELECT @n, @first, @k")
	rowsBoth("SELECT COUNT(*), @n FROM items WHERE id <= @n") // on hot, which the values were replayed to
	both("SET @@session.sql_select_limit = (SELECT COUNT(*) - 1 FROM audit_log)")
	rowsBoth("SELECT id FROM items ORDER BY id")
	both("SET SESSION sql_select_limit = DEFAULT")
	both("DO @d := (SELECT MAX(id) FROM audit_log)")
	rowsBoth("SELECT @d, n FROM items WHERE id = @d")
	both("DO (SELECT COUNT(*) FROM audit_log)")
	both("INSERT INTO audit_archive (id, note) VALUES (100, (SELECT MAX(note) FROM audit_log))")
	both("UPDATE audit_archive SET note = (SELECT note FROM audit_log WHERE id = 2) WHERE id = 100")
	both("DELETE FROM audit_archive WHERE id IN (SELECT id FROM audit_log WHERE id > 2)")
	both("INSERT INTO audit_archive SELECT id + 1000, note FROM audit_log WHERE id < 3")
	both("UPDATE audit_archive a JOIN audit_log l ON l.id = a.id SET a.note = CONCAT(l.note, '!')")
	both("DELETE a FROM audit_archive a JOIN audit_log l ON l.id + 1000 = a.id WHERE l.id = 1")
	both("CREATE TABLE audit_copy AS SELECT * FROM audit_log WHERE id > 1")
	rowsBoth("SELECT * FROM audit_copy ORDER BY id")
	both("CREATE VIEW audit_view AS SELECT id, note FROM audit_log WHERE id > 2")
	rowsBoth("SELECT * FROM audit_view ORDER BY id")
	both("HANDLER audit_log OPEN")
	rowsBoth("HANDLER audit_log READ `PRIMARY` FIRST")
	rowsBoth("HANDLER audit_log READ `PRIMARY` NEXT")
	both("HANDLER audit_log CLOSE")
	mysql.RegisterReaderHandler("audit_rows", func() io.Reader { return strings.NewReader("50\tfifty\n51\tfifty-one\n") })
	defer mysql.DeregisterReaderHandler("audit_rows")
	both("LOAD DATA LOCAL INFILE 'Reader::audit_rows' INTO TABLE audit_log")
	both("SELECT COUNT(*) INTO @c FROM audit_log")
	rowsBoth("SELECT @c")
	rowsBoth("SHOW COLUMNS FROM audit_log")
	rowsBoth("SHOW FULL COLUMNS IN audit_log")
	rowsBoth("SHOW CREATE TABLE audit_log")
	// Run on cold, their rows name the table in the client's database (the default backend's
	// DSN's), as one server's do.
	for _, q := range []string{"CHECK TABLE audit_log", "ANALYZE TABLE audit_log"} {
		got, err := connRows(ctx, conn, q)
		if err != nil || len(got) == 0 || !strings.HasPrefix(got[len(got)-1], dbName(t, f.hot)+".audit_log |") || !strings.HasSuffix(got[len(got)-1], "| OK") {
			t.Errorf("%s: %v, %v; want it named in the client's database, OK", q, got, err)
		}
	}
	// After ANALYZE TABLE on both (above through obroute, here on one server): the index statistics (Cardinality) are the table's, not an
	// estimate made before the LOAD DATA.
	if _, err := connRows(ctx, refConn, "ANALYZE TABLE audit_log"); err != nil {
		t.Fatal(err)
	}
	rowsBoth("SHOW INDEX FROM audit_log")

	// The server session of cold is lost while idle: its replacement gets the SET's values.
	for _, id := range processIDs(t, f.cold, "DB = '"+dbName(t, f.cold)+"'") {
		f.cold.Exec(t, fmt.Sprintf("KILL CONNECTION %d", id))
	}
	rowsBoth("SELECT @n, @first, @k, @d, COUNT(*) FROM audit_log")
	// Last: CALL leaves its server session holding state obroute cannot see, and the client
	// session then stays there and ends when it is lost (TestCallPinsTheClientSession).
	rowsBoth("CALL echo_n((SELECT COUNT(*) FROM audit_log))")
}

// The same statements on a time-sharded table, whose rows no one server holds, are refused with a
// message saying how to write them; nothing runs.
func TestTimeShardedTableInsideOtherStatementsIsRefused(t *testing.T) {
	f := newInside(t)
	ctx := context.Background()
	for _, r := range []struct {
		q     string
		want  error
		words string
	}{
		{"SET @n = (SELECT COUNT(*) FROM orders WHERE order_time >= '2025-03-01')", connector.ErrNotMergeable, "SET the variable to it as a literal"},
		{"SET @a = 1, @n = (SELECT MAX(id) FROM orders WHERE order_time >= '2025-03-01')", connector.ErrNotMergeable, "the SET reads the time-sharded table orders"},
		{"DO (SELECT COUNT(*) FROM orders WHERE order_time >= '2025-03-01')", connector.ErrUnreadable, "time-sharded table orders"},
		{"CALL echo_n((SELECT COUNT(*) FROM orders WHERE order_time >= '2025-03-01'))", connector.ErrUnreadable, "time-sharded table orders"},
		{"CREATE TABLE orders_copy AS SELECT * FROM orders WHERE order_time >= '2025-03-01'", connector.ErrNotMergeable, "CREATE TABLE … SELECT reads the time-sharded table orders"},
		{"CREATE VIEW orders_view AS SELECT * FROM orders WHERE order_time >= '2025-03-01'", connector.ErrNotMergeable, "CREATE VIEW over the time-sharded table orders"},
		{"LOAD DATA LOCAL INFILE 'Reader::none' INTO TABLE orders", connector.ErrNotMergeable, "LOAD DATA into the time-sharded table orders"},
		{"HANDLER orders OPEN", connector.ErrUnreadable, "time-sharded table orders"},
		{"SELECT * FROM orders WHERE order_time >= '2025-02-01' INTO OUTFILE '/nonexistent/orders.txt'", connector.ErrNotMergeable, "SELECT … INTO cannot be split"},
		{"HANDLER audit_log OPEN AS a", connector.ErrUnreadable, "open it without an alias"},
	} {
		_, err := f.db.ExecContext(ctx, r.q)
		if !errors.Is(err, r.want) || !strings.Contains(err.Error(), r.words) {
			t.Errorf("%s: %v; want %v saying %q", r.q, err, r.want, r.words)
		}
	}
	if n := count(t, f.hot, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('orders_copy', 'orders_view')"); n != 0 {
		t.Errorf("the refused CREATEs left %d tables on hot", n)
	}
	var n, a sql.NullInt64
	if err := f.db.QueryRowContext(ctx, "SELECT @n, @a").Scan(&n, &a); err != nil || n.Valid || a.Valid {
		t.Errorf("after the refused SETs: @n %v, @a %v (%v); want both NULL", n, a, err)
	}
	if got := count(t, f.hot, "SELECT COUNT(*) FROM orders_202503"); got != 1 {
		t.Errorf("orders_202503 holds %d rows after the refused statements, want 1", got)
	}
}

// connRows reads query's rows on conn as text, one string a row.
func connRows(ctx context.Context, conn *sql.Conn, query string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return textRows(rows)
}

// dbName is the database of b's DSN.
func dbName(t *testing.T, b *sqltest.Backend) string {
	t.Helper()
	mc, err := mysql.ParseDSN(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	return mc.DBName
}
