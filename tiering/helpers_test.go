package tiering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
	"github.com/obroute/obroute/tiering"
)

// ordersSQL creates one monthly table of the tests; %s is its name.
const ordersSQL = `CREATE TABLE %s (
  id BIGINT NOT NULL PRIMARY KEY,
  order_time DATETIME(6) NOT NULL,
  amount DECIMAL(10,2) NULL,
  note VARCHAR(20) NULL,
  KEY idx_time (order_time)
) DEFAULT CHARSET=utf8mb4`

// store is hot and cold databases with monthly orders tables and their shard metadata on hot.
type store struct {
	hot, cold *sqltest.Backend
	cfg       *config.Config
	s         *tiering.Store
}

// month is a monthly table of the fixture: its first day, where it lives, its rows' times.
type month struct {
	first string // "2025-01"
	on    string // "hot" or "cold"
	rows  []string
}

// newStore creates the tables of months on Shared hot and cold databases, each row of them,
// and their metadata rows (whole months, location set, is_hot when on hot).
func newStore(t *testing.T, months ...month) *store {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "cold")
	st := &store{hot: bs[0], cold: bs[1]}
	if err := metadata.CreateTable(context.Background(), st.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	id := 0
	for _, m := range months {
		first, err := time.Parse("2006-01", m.first)
		if err != nil {
			t.Fatal(err)
		}
		name := "orders_" + first.Format("200601")
		b := st.hot
		if m.on == "cold" {
			b = st.cold
		}
		b.Exec(t, fmt.Sprintf(ordersSQL, name))
		for _, r := range m.rows {
			id++
			b.Exec(t, "INSERT INTO "+name+" (id, order_time, amount, note) VALUES (?, ?, ?, ?)", id, r, fmt.Sprintf("%d.50", id), fmt.Sprintf("row %d", id))
		}
		st.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, ?, ?)",
			name, first.Format(time.DateTime), first.AddDate(0, 1, 0).Add(-time.Second).Format(time.DateTime), m.on == "hot", m.on)
	}
	st.cfg = &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: st.hot.DSN},
			{Name: "cold", Role: "cold", DSN: st.cold.DSN},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}}},
		Metadata:   config.Metadata{Backend: "hot", Refresh: config.Duration(200 * time.Millisecond)},
	}
	s, err := tiering.Open(st.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st.s = s
	return st
}

// at parses a UTC time written 2006-01-02 or 2006-01-02 15:04:05.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	for _, l := range []string{time.DateTime, time.DateOnly} {
		if v, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return v
		}
	}
	t.Fatalf("bad time %q", s)
	return time.Time{}
}

// count returns the number of rows of a table on a backend.
func count(t testing.TB, b *sqltest.Backend, table string) int {
	t.Helper()
	var n int
	if err := b.DB.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s on %s: %v", table, b.Name, err)
	}
	return n
}
