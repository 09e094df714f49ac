package connector_test

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// columnsOf lists the columns of table on backend b, in order.
func columnsOf(t *testing.T, b *sqltest.Backend, table string) []string {
	t.Helper()
	_, rows := readText(t, b.DB, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", table)
	var cols []string
	for _, r := range rows {
		cols = append(cols, r[0])
	}
	return cols
}

// backendOf returns the fixture's backend holding the i-th physical table of orders.
func (f *logicalFixture) backendOf(i int) *sqltest.Backend {
	if i < 2 {
		return f.cold
	}
	return f.hot
}

// DDL on the time-sharded table runs on every physical table, hot and cold; the MariaDB forms
// the parser does not know route by the table they name; CREATE, DROP and RENAME of the logical
// table are refused, CREATE TABLE IF NOT EXISTS does nothing, as one server would.
func TestDDLOnLogicalTables(t *testing.T) {
	f := newLogicalFixture(t, nil)
	for _, q := range []string{
		"ALTER TABLE orders ADD COLUMN note VARCHAR(20) NULL",
		"ALTER TABLE IF EXISTS orders WAIT 5 ADD COLUMN IF NOT EXISTS note VARCHAR(20) NULL, ALGORITHM=INPLACE, LOCK=NONE",
		"CREATE INDEX IF NOT EXISTS ix_amount ON orders (amount)",
		"CREATE OR REPLACE INDEX ix_amount ON orders (amount, id)",
		"DROP INDEX IF EXISTS ix_amount ON orders",
		"CREATE UNIQUE INDEX ux_id_time ON orders (id, order_time) ALGORITHM=INPLACE LOCK=NONE",
		"ALTER ONLINE TABLE orders WAIT 10 DROP INDEX ux_id_time", // not NOWAIT: a concurrent catalog read holds the lock for an instant
		"OPTIMIZE TABLE orders",
		"ANALYZE TABLE orders",
		"CHECK TABLE orders",
	} {
		for _, side := range []*sql.DB{f.db, f.one.DB} {
			if _, err := side.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	want := columnsOf(t, f.one, "orders")
	if !reflect.DeepEqual(want, []string{"id", "order_time", "amount", "note"}) {
		t.Fatalf("the reference's columns: %v", want)
	}
	for i, name := range f.months {
		if got := columnsOf(t, f.backendOf(i), name); !reflect.DeepEqual(got, want) {
			t.Errorf("%s has columns %v, want %v", name, got, want)
		}
	}
	_, got := readText(t, f.db, "SHOW INDEX FROM orders")
	_, ref := readText(t, f.one.DB, "SHOW INDEX FROM orders")
	if len(got) != len(ref) || len(got) != 2 {
		t.Errorf("indexes after the DDL: %v, one server's %v", got, ref)
	}
	// A maintenance statement through Query answers the rows of every physical table, named.
	for _, q := range []string{"ANALYZE TABLE orders", "CHECK TABLE orders", "OPTIMIZE TABLE orders"} {
		_, rows := readText(t, f.db, q)
		var tables []string
		for _, r := range rows {
			tables = append(tables, r[0][strings.IndexByte(r[0], '.')+1:])
		}
		if !reflect.DeepEqual(dedupe(tables), f.months) {
			t.Errorf("%s reports tables %v, want %v", q, tables, f.months)
		}
	}
	// MariaDB's CREATE INDEX IF NOT EXISTS on a routed table (bun's migrator) goes to its backend.
	mustExec(t, f.db, "CREATE INDEX IF NOT EXISTS ix_note ON audit_log (note)")
	mustExec(t, f.db, "DROP INDEX IF EXISTS ix_note ON audit_log WAIT 3")
	mustExec(t, f.db, "CREATE INDEX IF NOT EXISTS ix_note ON audit_log (note)")
	var n int
	if err := f.cold.DB.QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'audit_log' AND INDEX_NAME = 'ix_note'").Scan(&n); err != nil || n != 1 {
		t.Errorf("ix_note on cold's audit_log: %d (%v), want 1", n, err)
	}
	// TRUNCATE empties every physical table.
	for _, side := range []*sql.DB{f.db, f.one.DB} {
		mustExec(t, side, "TRUNCATE TABLE orders")
	}
	for i, name := range f.months {
		if err := f.backendOf(i).DB.QueryRow("SELECT COUNT(*) FROM " + name).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s after TRUNCATE: %d rows (%v)", name, n, err)
		}
	}
	// One server would find orders and do nothing.
	mustExec(t, f.db, "CREATE TABLE IF NOT EXISTS orders (id INT)")
	for _, side := range []*sqltest.Backend{f.hot, f.cold} {
		if err := side.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'").Scan(&n); err != nil || n != 0 {
			t.Errorf("a physical table named orders on %s: %d (%v)", side.Name, n, err)
		}
	}
	for _, q := range []string{
		"CREATE TABLE orders (id INT)",
		"CREATE OR REPLACE TABLE orders (id INT)",
		"DROP TABLE orders",
		"DROP TABLE IF EXISTS items, orders",
		"RENAME TABLE orders TO orders_old",
		"RENAME TABLE items TO orders",
		"ALTER TABLE orders RENAME TO orders_old",
		"CREATE TABLE orders_copy LIKE orders",
	} {
		if _, err := f.db.Exec(q); !errors.Is(err, connector.ErrLogicalTable) {
			t.Errorf("%s: %v, want ErrLogicalTable", q, err)
		}
	}
	// Outside transactions only.
	tx, err := f.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ALTER TABLE orders ADD COLUMN later INT"); !errors.Is(err, connector.ErrDDLInTransaction) {
		t.Errorf("ALTER in a transaction: %v, want ErrDDLInTransaction", err)
	}
	tx.Rollback()
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// A fan-out that fails on one physical table stops there and names the tables changed and the
// ones not; the IF NOT EXISTS form run again completes it.
func TestDDLFanOutPartialFailure(t *testing.T) {
	f := newLogicalFixture(t, nil)
	// The third table has the column already: ADD COLUMN fails there.
	mustExec(t, f.hot.DB, "ALTER TABLE "+f.months[2]+" ADD COLUMN note VARCHAR(20) NULL")
	_, err := f.db.Exec("ALTER TABLE orders ADD COLUMN note VARCHAR(20) NULL")
	var de *connector.DDLError
	if !errors.As(err, &de) || !errors.Is(err, connector.ErrDDLPartial) {
		t.Fatalf("ALTER failing on the third table: %v, want a *DDLError and ErrDDLPartial", err)
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1060 {
		t.Errorf("the server's error is not reachable: %v", err)
	}
	wantChanged := []string{f.months[0] + " on cold", f.months[1] + " on cold"}
	if !reflect.DeepEqual(de.Changed, wantChanged) || de.Failed != f.months[2]+" on hot" || !reflect.DeepEqual(de.NotRun, []string{f.months[3] + " on hot"}) {
		t.Errorf("changed %v, failed %q, not run %v", de.Changed, de.Failed, de.NotRun)
	}
	for _, name := range append(wantChanged, de.Failed, de.NotRun[0]) {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the message does not name %s: %v", name, err)
		}
	}
	if got := columnsOf(t, f.hot, f.months[3]); len(got) != 3 {
		t.Errorf("%s was changed after the failure: %v", f.months[3], got)
	}
	mustExec(t, f.db, "ALTER TABLE orders ADD COLUMN IF NOT EXISTS note VARCHAR(20) NULL")
	for i, name := range f.months {
		if got := columnsOf(t, f.backendOf(i), name); len(got) != 4 {
			t.Errorf("%s after the rerun: %v", name, got)
		}
	}
	// A failure on the first table changes nothing, and says so.
	_, err = f.db.Exec("ALTER TABLE orders ADD COLUMN note INT")
	if !errors.As(err, &de) || errors.Is(err, connector.ErrDDLPartial) || len(de.Changed) != 0 || !strings.Contains(err.Error(), "no physical table was changed") {
		t.Errorf("a failure on the first table: %v", err)
	}
}

// DDL on a time-sharded table is kept apart from obroute migrate and prepare, which copy its
// physical tables' definitions: it is refused while prepare (or other DDL on the table) holds
// the table's DDL lock, while a move of one of its tables holds its lock or is recorded
// unfinished; and it reads the shard metadata afresh, so that a table added since the last
// refresh is changed too.
func TestDDLFanOutAndTheStoreOperations(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	ctx := t.Context()
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	add := func(b *sqltest.Backend, month string) {
		from, _ := time.Parse("2006-01", month)
		name := "orders_" + from.Format("200601")
		mustExec(t, b.DB, "CREATE TABLE "+name+" "+ordersDDL)
		mustExec(t, hot.DB, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, ?, ?)",
			name, from.Format(time.DateTime), from.AddDate(0, 1, 0).Add(-time.Second).Format(time.DateTime), b == hot, b.Name)
	}
	add(cold, "2026-10")
	add(hot, "2026-11")
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "cold", Role: "cold", DSN: cold.DSN}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}}},
	}
	c, err := connector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	mustExec(t, db, "ALTER TABLE orders ADD COLUMN a INT") // loads the metadata: two tables
	// A table added since (as prepare adds one) is changed by the next DDL.
	add(hot, "2026-12")
	mustExec(t, hot.DB, "ALTER TABLE orders_202612 ADD COLUMN a INT")
	mustExec(t, db, "ALTER TABLE orders ADD COLUMN b INT")
	if got := columnsOf(t, hot, "orders_202612"); !reflect.DeepEqual(got, []string{"id", "order_time", "amount", "a", "b"}) {
		t.Errorf("the table added after the last refresh: %v", got)
	}
	schema := database(t, hot.DB)
	hold := func(name string) func() {
		conn, err := hot.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got != 1 {
			t.Fatalf("GET_LOCK(%s): %d %v", name, got, err)
		}
		return func() { conn.ExecContext(ctx, "DO RELEASE_LOCK(?)", name); conn.Close() }
	}
	for _, lock := range []string{metadata.DDLLockName(schema, "orders"), metadata.MoveLockName(schema, "orders_202610")} {
		release := hold(lock)
		_, err := db.Exec("ALTER TABLE orders ADD COLUMN c INT")
		release()
		if !errors.Is(err, connector.ErrDDLBusy) {
			t.Errorf("ALTER while %s is held: %v, want ErrDDLBusy", lock, err)
		}
	}
	mustExec(t, hot.DB, "CREATE TABLE shard_migration (table_name VARCHAR(64) PRIMARY KEY, step VARCHAR(16) NOT NULL)")
	mustExec(t, hot.DB, "INSERT INTO shard_migration VALUES ('orders_202610', 'copy')")
	if _, err := db.Exec("ALTER TABLE orders ADD COLUMN c INT"); !errors.Is(err, connector.ErrDDLBusy) || !strings.Contains(err.Error(), "obroute migrate -abort orders_202610") {
		t.Errorf("ALTER while a move is recorded unfinished: %v, want ErrDDLBusy", err)
	}
	mustExec(t, hot.DB, "UPDATE shard_migration SET step = 'done'")
	mustExec(t, db, "ALTER TABLE orders ADD COLUMN c INT")
	for _, tc := range []struct {
		b     *sqltest.Backend
		table string
	}{{cold, "orders_202610"}, {hot, "orders_202611"}, {hot, "orders_202612"}} {
		if got := columnsOf(t, tc.b, tc.table); len(got) != 6 {
			t.Errorf("%s: %v", tc.table, got)
		}
	}
}

// tableCount counts the tables named name in b's database.
func tableCount(t *testing.T, b *sqltest.Backend, name string) int {
	t.Helper()
	var n int
	if err := b.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// DDL naming a physical table of a time-sharded table without a backend hint: on one server
// that table does not exist (1051, 1146), so through obroute it must not act on the hidden
// table; it is refused with the hint to use. A backend hint still reaches it.
func TestDDLOnHiddenPhysicalTables(t *testing.T) {
	f := newLogicalFixture(t, nil)
	hotTable, coldTable := f.months[2], f.months[0] // orders_202611 on hot (the default), orders_202609 on cold
	for _, q := range []string{
		"DROP TABLE " + hotTable,
		"DROP TABLE IF EXISTS " + hotTable,
		"DROP TABLE items, " + hotTable,
		"TRUNCATE TABLE " + hotTable,
		"TRUNCATE " + strings.ToUpper(hotTable),
		"ALTER TABLE " + hotTable + " ADD COLUMN note INT",
		"ALTER TABLE `" + hotTable + "` DROP COLUMN amount",
		"RENAME TABLE " + hotTable + " TO gone",
		"RENAME TABLE items TO " + hotTable,
		"CREATE INDEX ix_amount ON " + hotTable + " (amount)",
		"DROP INDEX ix_time ON " + hotTable,
		"OPTIMIZE TABLE " + hotTable,              // one server answers a row saying the table does not exist
		"CREATE TABLE " + coldTable + " (id INT)", // on the default backend it would shadow cold's
		"CREATE TABLE copy LIKE " + hotTable,
		"DESCRIBE " + hotTable,
		"SHOW CREATE TABLE " + hotTable,
	} {
		_, errOne := f.one.DB.Exec(q)
		var me *mysql.MySQLError
		if !strings.HasPrefix(q, "CREATE TABLE "+coldTable) && !strings.Contains(q, "IF EXISTS") && !strings.HasPrefix(q, "OPTIMIZE") && (!errors.As(errOne, &me) || me.Number != 1051 && me.Number != 1146) {
			t.Fatalf("%s on one server: %v, want 1051 or 1146", q, errOne)
		}
		_, err := f.db.Exec(q)
		if !errors.Is(err, connector.ErrLogicalTable) || !strings.Contains(err.Error(), "OBROUTE(backend=") {
			t.Errorf("%s: %v, want ErrLogicalTable naming the backend hint", q, err)
		}
	}
	if tableCount(t, f.hot, hotTable) != 1 || tableCount(t, f.hot, coldTable) != 0 || tableCount(t, f.hot, "gone") != 0 || tableCount(t, f.hot, "items") != 1 {
		t.Errorf("the hidden tables were changed")
	}
	if got := columnsOf(t, f.hot, hotTable); len(got) != 3 {
		t.Errorf("%s's columns: %v", hotTable, got)
	}
	var n int
	if err := f.hot.DB.QueryRow("SELECT COUNT(*) FROM " + hotTable).Scan(&n); err != nil || n != 3 {
		t.Errorf("%s's rows: %d (%v)", hotTable, n, err)
	}
	// A temporary table of that name is the session's own; a backend hint reaches the physical table.
	mustExec(t, f.db, "/*+ OBROUTE(backend=hot) */ ALTER TABLE "+hotTable+" ADD COLUMN note INT")
	if got := columnsOf(t, f.hot, hotTable); len(got) != 4 {
		t.Errorf("%s after the hinted ALTER: %v", hotTable, got)
	}
}

// A time-sharded table's name in another case, or qualified by another database, is not that
// table on a server comparing names in their case (lower_case_table_names=0): one server says
// it does not exist; through obroute such DDL and descriptions are refused or reach that other
// database, never the logical table's physical tables.
func TestDDLNameCaseAndDatabase(t *testing.T) {
	f := newLogicalFixture(t, nil)
	var lower int
	if err := f.one.DB.QueryRow("SELECT @@lower_case_table_names").Scan(&lower); err != nil || lower != 0 {
		t.Skipf("lower_case_table_names=%d: names compare in any case", lower)
	}
	other := database(t, f.one.DB) // another database of the same server: it has a table orders
	for _, q := range []string{
		"ALTER TABLE ORDERS ADD COLUMN note INT",
		"ALTER TABLE `Orders` ADD COLUMN note INT",
		"TRUNCATE TABLE ORDERS",
		"CREATE INDEX ix_amount ON Orders (amount)",
		"DROP TABLE ORDERS",
		"DESCRIBE ORDERS",
		"SHOW COLUMNS FROM `Orders`",
		"SHOW CREATE TABLE ORDERS",
	} {
		_, errOne := f.one.DB.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(errOne, &me) || me.Number != 1051 && me.Number != 1146 {
			t.Fatalf("%s on one server: %v, want 1051 or 1146", q, errOne)
		}
		if _, err := f.db.Exec(q); !errors.Is(err, connector.ErrLogicalTable) {
			t.Errorf("%s: %v, want ErrLogicalTable", q, err)
		}
	}
	// orders qualified by another database is that database's table.
	mustExec(t, f.db, "ALTER TABLE `"+other+"`.orders ADD COLUMN other_note INT")
	if got := columnsOf(t, f.one, "orders"); len(got) != 4 {
		t.Errorf("%s.orders after the ALTER: %v", other, got)
	}
	for i, name := range f.months {
		if got := columnsOf(t, f.backendOf(i), name); len(got) != 3 {
			t.Errorf("%s was changed by the ALTER of %s.orders: %v", name, other, got)
		}
	}
	_, got := readText(t, f.db, "DESCRIBE `"+other+"`.orders")
	if len(got) != 4 {
		t.Errorf("DESCRIBE %s.orders: %v", other, got)
	}
	// Qualified by the current database, it is the logical table.
	mustExec(t, f.db, "ALTER TABLE `"+database(t, f.hot.DB)+"`.orders ADD COLUMN note INT")
	for i, name := range f.months {
		if got := columnsOf(t, f.backendOf(i), name); len(got) != 4 {
			t.Errorf("%s after the ALTER of the qualified logical table: %v", name, got)
		}
	}
}

// DDL on a time-sharded table that one server takes but that cannot hold across its physical
// tables is refused with the reason, changing no physical table: a unique or primary key
// without the shard key, a foreign key from or to it, dropping or renaming the shard-key column.
// The same keys with the shard key, and a change of the shard key's definition keeping its
// name, run.
func TestDDLKeysAcrossPhysicalTables(t *testing.T) {
	f := newLogicalFixture(t, nil)
	ctx := t.Context()
	one, err := f.one.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	reset := func() {
		for _, q := range []string{"SET FOREIGN_KEY_CHECKS = 0", "DROP TABLE IF EXISTS orders, items_ref", "CREATE TABLE orders " + ordersDDL, "CREATE TABLE items_ref " + itemsDDL, "SET FOREIGN_KEY_CHECKS = 1"} {
			if _, err := one.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustExec(t, f.hot.DB, "CREATE TABLE items_ref "+itemsDDL)
	for _, q := range []string{
		"ALTER TABLE orders ADD UNIQUE (id)",
		"ALTER TABLE orders ADD UNIQUE KEY ux_amount (amount)",
		"ALTER TABLE orders ADD CONSTRAINT ux UNIQUE INDEX (amount, id)",
		"ALTER TABLE orders ADD COLUMN code INT NULL UNIQUE",
		"ALTER TABLE orders ADD COLUMN note INT NULL, ADD UNIQUE INDEX IF NOT EXISTS ux_note (note)",
		"ALTER TABLE orders MODIFY amount DECIMAL(10,2) UNIQUE",
		"CREATE UNIQUE INDEX ux_amount ON orders (amount)",
		"CREATE UNIQUE INDEX IF NOT EXISTS ux_amount ON orders (amount DESC, id)",
		"ALTER TABLE orders DROP PRIMARY KEY, ADD PRIMARY KEY (id, amount)",
		"ALTER TABLE orders ADD COLUMN item_id INT NULL, ADD CONSTRAINT fk_item FOREIGN KEY (item_id) REFERENCES items_ref (id)",
		"ALTER TABLE items_ref ADD COLUMN order_id INT NULL, ADD FOREIGN KEY (order_id) REFERENCES orders (id)",
		"ALTER TABLE orders DROP COLUMN order_time",
		"ALTER TABLE orders DROP order_time",
		"ALTER TABLE orders DROP COLUMN IF EXISTS `order_time`",
		"ALTER TABLE orders CHANGE order_time placed_at DATETIME NOT NULL",
		"ALTER TABLE orders CHANGE COLUMN IF EXISTS order_time placed_at DATETIME NOT NULL",
		"ALTER TABLE orders RENAME COLUMN order_time TO placed_at",
		"ALTER TABLE orders ADD COLUMN note INT NULL, RENAME COLUMN order_time TO placed_at",
	} {
		reset()
		if _, err := one.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s on one server: %v", q, err)
		}
		if _, err := f.db.Exec(q); !errors.Is(err, connector.ErrLogicalTable) {
			t.Errorf("%s: %v, want ErrLogicalTable", q, err)
		}
	}
	for i, name := range f.months {
		if got := columnsOf(t, f.backendOf(i), name); !reflect.DeepEqual(got, []string{"id", "order_time", "amount"}) {
			t.Errorf("%s was changed: %v", name, got)
		}
	}
	if got := columnsOf(t, f.hot, "items_ref"); len(got) != 2 {
		t.Errorf("items_ref was changed: %v", got)
	}
	reset()
	for _, q := range []string{
		"ALTER TABLE orders ADD UNIQUE KEY ux_id_time (id, order_time)",
		"CREATE UNIQUE INDEX ux_amount_time ON orders (amount, `order_time`)",
		"ALTER TABLE orders CHANGE order_time order_time DATETIME NOT NULL",
		"ALTER TABLE orders MODIFY COLUMN order_time DATETIME NOT NULL, ADD COLUMN note VARCHAR(20) NULL COMMENT 'unique per order'",
		"ALTER TABLE orders DROP INDEX ux_amount_time, DROP COLUMN note",
	} {
		for _, side := range []*sql.DB{f.db, f.one.DB} {
			if _, err := side.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
}
