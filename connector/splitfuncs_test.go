package connector_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// newSplitPair starts orders split by month (December 2024 on cold, January to March 2025 on
// hot, the clock on 2025-03-15 with a hot window of two months) and table items on hot, beside one
// server holding orders in one table: a pair of connections to both.
func newSplitPair(t *testing.T) *pair {
	t.Helper()
	return newSplitPairWith(t, config.TimeTable{})
}

// newSplitPairWith is newSplitPair with orders' settings other than its name, shard key and hot
// window taken from tt.
func newSplitPairWith(t *testing.T, tt config.TimeTable) *pair {
	t.Helper()
	tt.Table, tt.ShardKey, tt.HotWindow = "orders", "order_time", config.HotWindow{Months: 2}
	bs := sqltest.Shared(t, "hot", "cold", "one")
	o := &oneServer{hot: bs[0], cold: bs[1], one: bs[2]}
	var tables metadata.StaticSource
	id := 0
	for m := 0; m < 4; m++ {
		from := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, m, 0)
		name := "orders_" + from.Format("200601")
		b := o.hot
		if m == 0 {
			b = o.cold
		}
		tables = append(tables, metadata.Table{Name: name, Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: m > 0})
		b.Exec(t, "CREATE TABLE "+name+" (id INT PRIMARY KEY, order_time DATETIME NOT NULL, amount INT, note VARCHAR(20))")
		if m == 0 {
			o.one.Exec(t, "CREATE TABLE orders (id INT PRIMARY KEY, order_time DATETIME NOT NULL, amount INT, note VARCHAR(20))")
		}
		for d := 1; d <= 3; d++ {
			id++
			row := fmt.Sprintf("(%d, '%s', %d, 'n%d')", id, from.AddDate(0, 0, d*5).Format(time.DateTime), id*10, id)
			b.Exec(t, "INSERT INTO "+name+" VALUES "+row)
			o.one.Exec(t, "INSERT INTO orders VALUES "+row)
		}
	}
	for _, b := range []*sqltest.Backend{o.hot, o.one} {
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
		b.Exec(t, "INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: o.hot.DSN}, {Name: "cold", Role: "cold", DSN: o.cold.DSN}},
		TimeTables: []config.TimeTable{tt},
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	o.db = sql.OpenDB(c)
	t.Cleanup(func() { o.db.Close() })
	if o.ref, err = sql.Open("mysql", o.one.DSN); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.ref.Close() })
	return o.pair(t)
}

// ROW_COUNT(), FOUND_ROWS(), SHOW WARNINGS and @@warning_count after a statement split across
// tables give what one server gives for the statement (the sum of the parts, the union of their
// warnings in the order of their tables, within max_error_count and SHOW WARNINGS' LIMIT), or are
// refused; never one part's. The rows' ids follow their times, so that one server's table scan
// meets them in the order of the physical tables.
func TestSessionFunctionsAfterSplit(t *testing.T) {
	p := newSplitPair(t)
	p.steps(`
		SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id
		SELECT FOUND_ROWS()
		SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id LIMIT 5
		SET @x = 1
		SELECT FOUND_ROWS(), ROW_COUNT()
		SELECT FOUND_ROWS() + 1, ROW_COUNT() AS rc, 7
		UPDATE orders SET amount = amount + 1 WHERE order_time >= '2025-01-01' AND order_time < '2025-03-01'
		SELECT ROW_COUNT()
		SELECT FOUND_ROWS()
		DELETE FROM orders WHERE order_time >= '2025-02-10' AND order_time < '2025-03-12'
		SELECT ROW_COUNT()
		INSERT INTO orders (id, order_time, amount, note) VALUES (8, '2025-02-20 00:00:00', 1, 'x'), (13, '2025-03-20 00:00:00', 2, 'y')
		SELECT ROW_COUNT()
		!state SHOW WARNINGS
		!state SELECT LAST_INSERT_ID()
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SHOW WARNINGS
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SHOW COUNT(*) WARNINGS
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SELECT @@warning_count, @@session.error_count
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SHOW WARNINGS LIMIT 1, 3
		SHOW ERRORS
		SET max_error_count = 2
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SHOW WARNINGS
		SELECT @@warning_count
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND note = 0 ORDER BY id
		SELECT 1
		!state SHOW WARNINGS
		SELECT id FROM items ORDER BY id
		SHOW WARNINGS
		SET @s = 'a string, read back'
		SELECT FOUND_ROWS(), ROW_COUNT()`, refusals)
	// A split SELECT whose rows were not all read: its FOUND_ROWS() cannot be told.
	ctx := context.Background()
	rows, err := p.ob.QueryContext(ctx, "SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	rows.Close()
	p.refused("SELECT FOUND_ROWS()", connector.ErrSessionState)
}
