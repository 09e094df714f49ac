package connector_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/connector"
)

// The logical view hides the physical tables of a time-sharded table: one server with the
// logical table has no orders_202611. A statement of any kind naming one in any clause without
// a backend hint is refused, as DDL on it is, rather than run on the default backend: there it
// wrote rows the logical table never reads (outside the table's span), moved rows out of the
// view, wrote into and read a stale copy of a table that lives on another backend, and was
// answered (CHECKSUM TABLE) where one server says the table does not exist. With a backend hint
// the statement runs on that backend.
func TestStatementsOnHiddenPhysicalTables(t *testing.T) {
	f := newLogicalFixture(t, nil)
	coldTable, hotTable, newest := f.months[1], f.months[2], f.months[3] // orders_202610 on cold, orders_202611 and orders_202612 on hot (the default)
	// A stale copy on hot of a table the metadata places on cold.
	mustExec(t, f.hot.DB, "CREATE TABLE "+coldTable+" "+ordersDDL)
	for _, c := range []struct{ q, backend string }{
		{"INSERT INTO " + newest + " (id, order_time, amount) VALUES (78, '2026-09-20 00:00:00', 7.00)", "hot"},
		{"REPLACE INTO " + newest + " (id, order_time, amount) VALUES (79, '2026-12-20 00:00:00', 7.00)", "hot"},
		{"INSERT INTO items (id, name) SELECT id, 'x' FROM " + hotTable, "hot"},
		{"UPDATE " + hotTable + " SET order_time = '2026-01-01' WHERE id = 20", "hot"},
		{"UPDATE items JOIN " + hotTable + " o ON o.id = items.id SET o.amount = 0", "hot"},
		{"DELETE FROM " + hotTable + " WHERE id = 20", "hot"},
		{"INSERT INTO " + coldTable + " (id, order_time, amount) VALUES (17, '2026-10-20 00:00:00', 7.00)", "cold"},
		{"SELECT COUNT(*) FROM " + coldTable, "cold"},
		{"SELECT COUNT(*) FROM `" + strings.ToUpper(coldTable) + "`", "cold"},
		{"SELECT * FROM " + hotTable + " WHERE id = 20", "hot"},
		{"SELECT i.name FROM items i JOIN " + hotTable + " o ON o.id = i.id", "hot"},
		{"SELECT name FROM items WHERE id IN (SELECT id FROM " + newest + ")", "hot"},
		{"SELECT (SELECT MAX(amount) FROM " + coldTable + ") AS m", "cold"},
		{"SELECT COUNT(*) FROM orders WHERE order_time >= '2026-11-01' AND id IN (SELECT id FROM " + hotTable + ")", "hot"},
		{"SELECT id FROM (SELECT id FROM " + hotTable + ") d", "hot"},
		{"CHECKSUM TABLE " + newest, "hot"},
		{"CREATE TABLE kept AS SELECT * FROM " + hotTable, "hot"},
	} {
		_, errOne := f.one.DB.Exec(c.q)
		var me *mysql.MySQLError
		if !strings.HasPrefix(c.q, "CHECKSUM") && (!errors.As(errOne, &me) || me.Number != 1146) {
			t.Fatalf("%s on one server: %v, want 1146", c.q, errOne)
		}
		_, err := f.db.Exec(c.q)
		if !errors.Is(err, connector.ErrLogicalTable) || !strings.Contains(err.Error(), "OBROUTE(backend="+c.backend+")") || !strings.Contains(err.Error(), "name orders") {
			t.Errorf("%s: %v, want ErrLogicalTable naming orders and the backend hint for %s", c.q, err, c.backend)
		}
		if strings.HasPrefix(c.q, "SELECT") {
			if rows, err := f.db.Query(c.q); err == nil {
				rows.Close()
				t.Errorf("%s: queried, want ErrLogicalTable", c.q)
			} else if !errors.Is(err, connector.ErrLogicalTable) {
				t.Errorf("%s: queried: %v, want ErrLogicalTable", c.q, err)
			}
		}
	}
	// One server's answer: CHECKSUM TABLE of a table it does not have gives a NULL checksum.
	_, got := readText(t, f.one.DB, "CHECKSUM TABLE "+newest)
	if len(got) != 1 || got[0][1] != "NULL" {
		t.Fatalf("CHECKSUM TABLE %s on one server: %v", newest, got)
	}
	// Nothing was written: the logical table still has its 12 rows, 3 in each physical table,
	// and hot's stale copy none; row 20 is where it was.
	var n int
	if err := f.db.QueryRow("SELECT COUNT(*) FROM orders WHERE order_time >= '2026-09-01' AND order_time < '2027-01-01'").Scan(&n); err != nil || n != 12 {
		t.Errorf("the logical table's rows: %d (%v), want 12", n, err)
	}
	for i, name := range f.months {
		if err := f.backendOf(i).DB.QueryRow("SELECT COUNT(*) FROM " + name).Scan(&n); err != nil || n != 3 {
			t.Errorf("%s's rows: %d (%v), want 3", name, n, err)
		}
	}
	if err := f.hot.DB.QueryRow("SELECT COUNT(*) FROM " + coldTable).Scan(&n); err != nil || n != 0 {
		t.Errorf("hot's stale %s: %d rows (%v), want 0", coldTable, n, err)
	}
	if err := f.db.QueryRow("SELECT COUNT(*) FROM orders WHERE order_time >= '2026-11-01' AND order_time < '2026-12-01' AND id = 20").Scan(&n); err != nil || n != 1 {
		t.Errorf("row 20 in the logical table: %d (%v), want 1", n, err)
	}
	if tableCount(t, f.hot, "kept") != 0 {
		t.Errorf("CREATE TABLE kept AS SELECT … %s ran", hotTable)
	}
	// With a backend hint the statement runs on that backend's physical table.
	if err := f.db.QueryRow("/*+ OBROUTE(backend=cold) */ SELECT COUNT(*) FROM " + coldTable).Scan(&n); err != nil || n != 3 {
		t.Errorf("hinted COUNT(*) of cold's %s: %d (%v), want 3", coldTable, n, err)
	}
	mustExec(t, f.db, "/*+ OBROUTE(backend=hot) */ UPDATE "+hotTable+" SET amount = 9.00 WHERE id = 20")
	if err := f.hot.DB.QueryRow("SELECT COUNT(*) FROM " + hotTable + " WHERE amount = 9.00").Scan(&n); err != nil || n != 1 {
		t.Errorf("hot's %s after the hinted UPDATE: %d rows of amount 9.00 (%v), want 1", hotTable, n, err)
	}
	_, got = readText(t, f.db, "/*+ OBROUTE(backend=hot) */ CHECKSUM TABLE "+newest)
	if len(got) != 1 || got[0][1] == "NULL" {
		t.Errorf("hinted CHECKSUM TABLE %s: %v, want hot's checksum", newest, got)
	}
	// A temporary table of that name is the client session's own.
	conn, err := f.db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "CREATE TEMPORARY TABLE "+hotTable+" (id INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "INSERT INTO "+hotTable+" VALUES (1)"); err != nil {
		t.Errorf("INSERT into the temporary %s: %v", hotTable, err)
	}
	if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+hotTable).Scan(&n); err != nil || n != 1 {
		t.Errorf("the temporary %s: %d rows (%v), want 1", hotTable, n, err)
	}
}
