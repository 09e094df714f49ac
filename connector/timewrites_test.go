package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// timeWrites is two time-sharded tables, one physical table a month from January to March 2025
// on backend hot (which holds the shard metadata too), and a reference server holding each
// logical table whole: orders, whose primary key is (id), and events, whose primary key is
// (id, at) and so holds the shard key. items is an ordinary table on both.
type timeWrites struct {
	db       *sql.DB
	hot, ref *sqltest.Backend
}

var timeWriteMonths = []string{"202501", "202502", "202503"}

func newTimeWrites(t *testing.T, defaultRange time.Duration) *timeWrites {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "ref")
	f := &timeWrites{hot: bs[0], ref: bs[1]}
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, f.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	defs := map[string]string{
		"orders": "(id INT NOT NULL, order_time DATETIME NOT NULL, n INT NOT NULL DEFAULT 0, PRIMARY KEY (id)) ENGINE=InnoDB",
		"events": "(id INT NOT NULL, at DATETIME NOT NULL, n INT NOT NULL DEFAULT 0, PRIMARY KEY (id, at)) ENGINE=InnoDB",
	}
	for logical, def := range defs {
		f.ref.Exec(t, "CREATE TABLE "+logical+" "+def)
		for _, m := range timeWriteMonths {
			from, _ := time.Parse("200601", m)
			f.hot.Exec(t, "CREATE TABLE "+logical+"_"+m+" "+def)
			f.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, 1, 'hot')",
				logical+"_"+m, from, from.AddDate(0, 1, 0).Add(-time.Second))
		}
	}
	for _, b := range []*sqltest.Backend{f.hot, f.ref} {
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB")
		b.Exec(t, "INSERT INTO items VALUES (1, 0), (2, 0), (3, 0)")
	}
	// The same rows on both sides: every id in February and March (orders' ids 1 and 2 in both).
	seed := []string{
		"INSERT INTO orders (id, order_time, n) VALUES (1, '2025-02-10 10:00:00', 1), (2, '2025-03-10 10:00:00', 1), (3, '2025-03-11 10:00:00', 1)",
		"INSERT INTO events (id, at, n) VALUES (1, '2025-02-10 10:00:00', 1), (2, '2025-03-10 10:00:00', 1), (1, '2025-03-12 10:00:00', 1)",
	}
	for _, s := range seed {
		f.ref.Exec(t, s)
	}
	cfg := &config.Config{
		Backends: []config.Backend{{Name: "hot", Role: "hot", DSN: f.hot.DSN}},
		TimeTables: []config.TimeTable{
			{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}, DefaultRange: defaultRange},
			{Table: "events", ShardKey: "at", HotWindow: config.HotWindow{Months: 2}},
		},
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	f.db = sql.OpenDB(c)
	t.Cleanup(func() { f.db.Close() })
	for _, s := range seed {
		mustExec(t, f.db, s)
	}
	f.same(t, "after the seed")
	return f
}

// rowsOf reads query's rows as text, one string a row.
func rowsOf(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out, err := textRows(rows)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// textRows reads and closes rows, each as its values' text joined by " | ".
func textRows(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(v.String)
		}
		out = append(out, b.String())
	}
	return out, rows.Err()
}

// same checks that each logical table holds, over its physical tables, the rows the reference
// holds, and that every row is in the table whose span holds its shard-key value.
func (f *timeWrites) same(t *testing.T, when string) {
	t.Helper()
	for logical, key := range map[string]string{"orders": "order_time", "events": "at"} {
		var got []string
		for _, m := range timeWriteMonths {
			table := logical + "_" + m
			got = append(got, rowsOf(t, f.hot.DB, "SELECT id, CAST("+key+" AS CHAR), n FROM "+table)...)
			if misplaced := rowsOf(t, f.hot.DB, fmt.Sprintf("SELECT id FROM %s WHERE DATE_FORMAT(%s, '%%Y%%m') <> '%s'", table, key, m)); len(misplaced) > 0 {
				t.Errorf("%s: %s holds rows outside its span (ids %v)", when, table, misplaced)
			}
		}
		slices.Sort(got)
		want := rowsOf(t, f.ref.DB, "SELECT id, CAST("+key+" AS CHAR), n FROM "+logical)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s holds\n%v\none server holds\n%v", when, logical, got, want)
		}
	}
	if got, want := rowsOf(t, f.hot.DB, "SELECT id, n FROM items ORDER BY id"), rowsOf(t, f.ref.DB, "SELECT id, n FROM items ORDER BY id"); !slices.Equal(got, want) {
		t.Errorf("%s: items holds %v, one server %v", when, got, want)
	}
}

// both runs query through obroute and on the reference, and checks that the rows affected and
// the tables' rows are the same.
func (f *timeWrites) both(t *testing.T, query string) {
	t.Helper()
	res, err := f.db.Exec(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	refRes, err := f.ref.DB.Exec(query)
	if err != nil {
		t.Fatalf("%s on one server: %v", query, err)
	}
	n, _ := res.RowsAffected()
	refN, _ := refRes.RowsAffected()
	if n != refN {
		t.Errorf("%s: %d rows affected, one server %d", query, n, refN)
	}
	f.same(t, query)
}

// refused runs query through obroute, checks that it fails with want and with a message holding
// words, and that nothing changed.
func (f *timeWrites) refused(t *testing.T, query string, want error, words string) {
	t.Helper()
	_, err := f.db.Exec(query)
	if !errors.Is(err, want) || !strings.Contains(err.Error(), words) {
		t.Errorf("%s: %v; want %v saying %q", query, err, want, words)
	}
	f.same(t, "after the refused "+query)
}

// REPLACE, INSERT … ON DUPLICATE KEY UPDATE and INSERT IGNORE on a time-sharded table give what
// one server gives when every unique key of the physical tables holds the shard key (events),
// also split across tables; they are refused when one does not (orders, whose duplicate of id 1
// is in February's table while the new row goes to March's: one server replaces or updates it,
// a split one would insert a second row). Assigning the shard key in ON DUPLICATE KEY UPDATE is
// refused as the UPDATE that does it is; assigning it its own VALUES() is kept.
func TestUpsertsOnTimeShardedTables(t *testing.T) {
	f := newTimeWrites(t, 0)
	for _, q := range []string{
		"INSERT INTO events (id, at, n) VALUES (1, '2025-02-10 10:00:00', 5) ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
		"INSERT INTO events (id, at, n) VALUES (1, '2025-02-10 10:00:00', 7), (2, '2025-03-10 10:00:00', 2), (3, '2025-01-10 10:00:00', 1) ON DUPLICATE KEY UPDATE n = VALUES(n), at = VALUES(at)",
		"REPLACE INTO events (id, at, n) VALUES (2, '2025-03-10 10:00:00', 9), (1, '2025-01-05 10:00:00', 4)",
		"INSERT IGNORE INTO events (id, at, n) VALUES (2, '2025-03-10 10:00:00', 100), (4, '2025-01-10 10:00:00', 1)",
		"INSERT INTO orders (id, order_time, n) VALUES (9, '2025-03-13 10:00:00', 1)",
	} {
		f.both(t, q)
	}
	for _, q := range []string{
		"REPLACE INTO orders (id, order_time, n) VALUES (1, '2025-03-10 10:00:00', 9)",
		"INSERT INTO orders (id, order_time, n) VALUES (1, '2025-03-10 10:00:00', 9) ON DUPLICATE KEY UPDATE n = VALUES(n)",
		"INSERT IGNORE INTO orders (id, order_time, n) VALUES (1, '2025-03-10 10:00:00', 9)",
	} {
		f.refused(t, q, connector.ErrNotMergeable, "the unique key PRIMARY (id) of orders_202503 does not hold the shard key order_time")
	}
	f.refused(t, "INSERT INTO events (id, at, n) VALUES (1, '2025-02-10 10:00:00', 0) ON DUPLICATE KEY UPDATE at = '2025-01-20 10:00:00'",
		connector.ErrNotMergeable, "ON DUPLICATE KEY UPDATE sets the shard key at")
}

// An UPDATE or DELETE without a range on the shard key is refused even with a default_range,
// which narrows reads only (a write narrowed to it would leave the rows outside it unchanged);
// the other writes a split cannot make exact are refused too, and those on one table give what
// one server gives.
func TestWritesOnTimeShardedTablesAsOneServer(t *testing.T) {
	f := newTimeWrites(t, 720*time.Hour)
	for _, q := range []string{"UPDATE orders SET n = n + 1", "DELETE FROM orders WHERE n > 100", "UPDATE orders SET n = 2 WHERE id = 1"} {
		f.refused(t, q, connector.ErrNoTimeRange, "default_range never applies to a write")
	}
	// A read still gets the default range: it reads the tables the last 30 days overlap.
	if got := rowsOf(t, f.db, "SELECT id FROM orders ORDER BY id"); !slices.Contains(got, "2") || !slices.Contains(got, "3") {
		t.Errorf("SELECT under default_range 720h: ids %v, want those of February's and March's tables", got)
	}
	for _, r := range []struct{ q, words string }{
		{"INSERT INTO orders (id, order_time, n) SELECT id + 10, '2025-03-01 10:00:00', n FROM items", "INSERT … SELECT into the time-sharded table orders"},
		{"INSERT INTO items (id, n) SELECT id + 10, n FROM orders WHERE order_time >= '2025-03-01'", "the INSERT reads the time-sharded table orders"},
		{"UPDATE items i JOIN orders o ON o.id = i.id SET o.order_time = '2025-01-05 10:00:00' WHERE o.order_time >= '2025-02-01'", "UPDATE sets the shard key order_time"},
		{"UPDATE orders o, items i SET o.order_time = '2025-01-05 10:00:00' WHERE o.id = i.id AND o.order_time >= '2025-02-01'", "a multi-table UPDATE on orders"},
		{"DELETE FROM orders WHERE order_time >= '2025-02-01' ORDER BY id LIMIT 1", "DELETE … ORDER BY/LIMIT on orders would be applied per table"},
		{"UPDATE orders SET n = 5 WHERE order_time >= '2025-02-01' ORDER BY id LIMIT 1", "UPDATE … ORDER BY/LIMIT on orders would be applied per table"},
		// Split, items 1 and 2 would be updated once per physical table their order is in.
		{"UPDATE orders o JOIN items i ON i.id <= o.id SET i.n = i.n + 1 WHERE o.order_time >= '2025-02-01'", "a joined row would be updated once per table it joins"},
		{"UPDATE items SET n = (SELECT COUNT(*) FROM orders WHERE order_time >= '2025-02-01')", "the UPDATE reads the time-sharded table orders in a subquery"},
		{"DELETE FROM items WHERE id IN (SELECT id FROM orders WHERE order_time >= '2025-03-01')", "the DELETE reads the time-sharded table orders in a subquery"},
	} {
		f.refused(t, r.q, connector.ErrNotMergeable, r.words)
	}
	for _, q := range []string{
		"DELETE FROM orders WHERE order_time >= '2025-03-01' ORDER BY id DESC LIMIT 1",
		"UPDATE orders o JOIN items i ON i.id <= o.id SET i.n = i.n + 1 WHERE o.order_time >= '2025-03-01'",
		"UPDATE orders o JOIN items i ON i.id = o.id SET o.n = o.n + i.id + 10 WHERE o.order_time >= '2025-02-01'",
		"UPDATE orders SET n = 7 WHERE order_time >= '2025-02-01' AND id = 1",
	} {
		f.both(t, q)
	}
}
