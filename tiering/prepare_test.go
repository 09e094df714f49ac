package tiering_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// openObroute opens obroute over the store's configuration with the clock fixed at now.
func openObroute(t *testing.T, st *store, now time.Time) (*connector.Connector, *sql.DB) {
	t.Helper()
	cfg := *st.cfg
	cfg.Backends = append([]config.Backend(nil), st.cfg.Backends...)
	for i := range cfg.Backends {
		cfg.Backends[i].MySQL = nil
	}
	conn, err := connector.New(&cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return conn, db
}

// TestPrepareAcrossThePeriodBoundary: the newest table's span is open above, so a row written
// past its max_time by another writer is read (the server and obroute both count 3); an INSERT
// for the next period is refused with the command to run; after prepare, writes at
// 23:59:59.999999 and at 00:00:00 of the new period both succeed through obroute and land in
// their tables, a second prepare does nothing, and verify passes.
func TestPrepareAcrossThePeriodBoundary(t *testing.T) {
	ctx := context.Background()
	now := at(t, "2026-11-30 12:00:00")
	st := newStore(t,
		month{"2026-10", "cold", []string{"2026-10-20 10:00:00"}},
		month{"2026-11", "hot", []string{"2026-11-10 10:00:00", "2026-11-29 11:00:00"}},
	)
	st.hot.Exec(t, "UPDATE shard_metadata SET max_time = '2026-11-29 12:00:00' WHERE table_name = 'orders_202611'")
	st.hot.Exec(t, "INSERT INTO orders_202611 (id, order_time) VALUES (50, '2026-11-30 06:00:00')") // another writer
	conn, db := openObroute(t, st, now)

	const rangeSQL = "SELECT COUNT(*) FROM orders WHERE order_time >= '2026-11-01' AND order_time < '2027-01-01'"
	var n int
	if err := db.QueryRow(rangeSQL).Scan(&n); err != nil || n != 3 {
		t.Fatalf("obroute counts %d rows (%v); the server holds 3", n, err)
	}
	_, err := db.Exec("INSERT INTO orders (id, order_time) VALUES (60, '2026-12-01 00:00:00')")
	if !errors.Is(err, routing.ErrNoShardTable) || !strings.Contains(err.Error(), "obroute metadata prepare") {
		t.Fatalf("INSERT into the next period without prepare: %v; want ErrNoShardTable naming obroute metadata prepare", err)
	}

	done, err := st.s.Prepare(ctx, now, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0].Table.Name != "orders_202612" || done[0].Backend != "hot" || done[0].Widened != "orders_202611" ||
		!done[0].Table.Min.Equal(at(t, "2026-12-01")) || !done[0].Table.Max.Equal(at(t, "2026-12-31 23:59:59")) {
		t.Fatalf("prepare did %+v; want orders_202612 for December on hot, orders_202611 widened", done)
	}
	if again, err := st.s.Prepare(ctx, now, ""); err != nil || len(again) != 0 {
		t.Fatalf("second prepare: %+v, %v; want nothing to do", again, err)
	}
	var maxTime string
	if err := st.hot.DB.QueryRow("SELECT CAST(max_time AS CHAR) FROM shard_metadata WHERE table_name = 'orders_202611'").Scan(&maxTime); err != nil || maxTime != "2026-11-30 23:59:59" {
		t.Errorf("orders_202611 max_time %q (%v); want it raised to 2026-11-30 23:59:59", maxTime, err)
	}

	if err := conn.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	for id, at := range map[int]string{61: "2026-11-30 23:59:59.999999", 62: "2026-12-01 00:00:00"} {
		if _, err := db.Exec("INSERT INTO orders (id, order_time) VALUES (?, ?)", id, at); err != nil {
			t.Errorf("INSERT at %s through obroute after prepare: %v", at, err)
		}
	}
	var got string
	if err := st.hot.DB.QueryRow("SELECT CAST(order_time AS CHAR) FROM orders_202611 WHERE id = 61").Scan(&got); err != nil || got != "2026-11-30 23:59:59.999999" {
		t.Errorf("row 61 in orders_202611: %q, %v", got, err)
	}
	if err := st.hot.DB.QueryRow("SELECT CAST(order_time AS CHAR) FROM orders_202612 WHERE id = 62").Scan(&got); err != nil || got != "2026-12-01 00:00:00.000000" {
		t.Errorf("row 62 in orders_202612: %q, %v", got, err)
	}
	if err := db.QueryRow(rangeSQL).Scan(&n); err != nil || n != 5 {
		t.Errorf("after the writes obroute counts %d rows (%v), want 5", n, err)
	}
	r, err := st.s.Verify(ctx, now)
	if err != nil || !r.OK() || len(r.Findings) != 0 {
		t.Errorf("verify after prepare: %+v, %v; want no finding", r, err)
	}
}

// TestPrepareRefusals: prepare does not create a table that would hide rows of the newest one,
// nor guess the period of a table it cannot read.
func TestPrepareRefusals(t *testing.T) {
	ctx := context.Background()
	now := at(t, "2026-11-30 12:00:00")
	st := newStore(t, month{"2026-11", "hot", []string{"2026-11-10 10:00:00"}})
	st.hot.Exec(t, "INSERT INTO orders_202611 (id, order_time) VALUES (50, '2026-12-01 00:00:01')")
	_, err := st.s.Prepare(ctx, now, "orders")
	if err == nil || !strings.Contains(err.Error(), "orders_202611 on hot holds rows from 2026-12-01 00:00:00 on (up to 2026-12-01 00:00:01), which belong to the next period") {
		t.Errorf("prepare with rows of the next period in the newest table: %v", err)
	}
	if ok, _ := tableOn(st, "orders_202612"); ok {
		t.Error("the refused prepare created orders_202612")
	}
	st.hot.Exec(t, "CREATE TABLE orders_next LIKE orders_202611")
	st.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES ('orders_9next', '2026-12-01', '2026-12-31 23:59:59', 1, 'hot')")
	if _, err := st.s.Prepare(ctx, now, ""); err == nil || !strings.Contains(err.Error(), "cannot tell the period of orders_9next from its name") {
		t.Errorf("prepare after a table it cannot read the period of: %v", err)
	}
	if _, err := st.s.Prepare(ctx, now, "invoices"); err == nil || !strings.Contains(err.Error(), "invoices is not a configured time table") {
		t.Errorf("prepare of an unknown table: %v", err)
	}
}

func tableOn(st *store, name string) (bool, error) {
	var n int
	err := st.hot.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n)
	return n > 0, err
}

// TestPrepareWaitsForDDL: prepare creates a table LIKE the newest one only while no DDL on the
// logical table runs through obroute (it holds the table's DDL lock meanwhile): it waits, and a
// DDL run through obroute while prepare holds the lock is refused; once the DDL has ended the
// new table has its definition.
func TestPrepareWaitsForDDL(t *testing.T) {
	ctx := context.Background()
	now := at(t, "2026-11-30 12:00:00")
	st := newStore(t, month{"2026-10", "cold", nil}, month{"2026-11", "hot", nil})
	_, db := openObroute(t, st, now)
	var schema string
	if err := st.hot.DB.QueryRow("SELECT DATABASE()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	lock, err := st.hot.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	name := metadata.DDLLockName(schema, "orders")
	if _, err := lock.ExecContext(ctx, "DO GET_LOCK(?, 0)", name); err != nil { // as a DDL through obroute holds it
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	_, err = st.s.Prepare(short, now, "orders")
	cancel()
	if err == nil || !strings.Contains(err.Error(), "waiting for DDL on orders") || count(t, st.hot, "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders_202612'") != 0 {
		t.Fatalf("prepare while DDL runs: %v; want it to wait and create nothing", err)
	}
	st.hot.Exec(t, "ALTER TABLE orders_202611 ADD COLUMN extra INT") // the DDL, on the newest table
	if _, err := lock.ExecContext(ctx, "DO RELEASE_LOCK(?)", name); err != nil {
		t.Fatal(err)
	}
	if _, err := st.s.Prepare(ctx, now, "orders"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.hot.DB.QueryRow("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders_202612' AND COLUMN_NAME = 'extra'").Scan(&n); err != nil || n != 1 {
		t.Errorf("the prepared table lacks the column the DDL added: %d %v", n, err)
	}
	// DDL through obroute while prepare holds the lock is refused.
	if _, err := lock.ExecContext(ctx, "DO GET_LOCK(?, 0)", name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE orders ADD COLUMN more INT"); !errors.Is(err, connector.ErrDDLBusy) {
		t.Errorf("DDL while the lock is held: %v, want ErrDDLBusy", err)
	}
}
