package connector_test

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// logicalFixture is the layout: orders time-sharded in monthly tables, two on cold and
// two on hot, audit_log routed to cold, items on the default backend; and one more database,
// one, holding every table under its logical name with all its rows, the reference.
type logicalFixture struct {
	hot, cold, one *sqltest.Backend
	c              *connector.Connector
	db             *sql.DB
	months         []string // physical tables of orders, oldest first
}

const (
	ordersDDL = "(id INT NOT NULL PRIMARY KEY, order_time DATETIME NOT NULL, amount DECIMAL(10,2), KEY ix_time (order_time)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	auditDDL  = "(id INT NOT NULL PRIMARY KEY, note VARCHAR(40)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	itemsDDL  = "(id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
)

// newLogicalFixture builds the fixture; tune changes the time table's configuration.
func newLogicalFixture(t *testing.T, tune func(*config.TimeTable)) *logicalFixture {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "cold", "one")
	f := &logicalFixture{hot: bs[0], cold: bs[1], one: bs[2]}
	var tables metadata.StaticSource
	mustExec(t, f.one.DB, "CREATE TABLE orders "+ordersDDL)
	for i := range 4 {
		from := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0)
		name := "orders_" + from.Format("200601")
		f.months = append(f.months, name)
		b := f.cold
		if i >= 2 {
			b = f.hot
		}
		tables = append(tables, metadata.Table{Name: name, Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: b == f.hot})
		mustExec(t, b.DB, "CREATE TABLE "+name+" "+ordersDDL)
		for k := range 3 {
			row := fmt.Sprintf("(%d, '%s', %d.50)", i*10+k, from.Add(time.Duration(k*24+1)*time.Hour).Format(time.DateTime), i*100+k)
			mustExec(t, b.DB, "INSERT INTO "+name+" VALUES "+row)
			mustExec(t, f.one.DB, "INSERT INTO orders VALUES "+row)
		}
	}
	for _, b := range []*sqltest.Backend{f.cold, f.one} {
		mustExec(t, b.DB, "CREATE TABLE audit_log "+auditDDL)
		mustExec(t, b.DB, "INSERT INTO audit_log VALUES (1, 'one'), (2, 'two')")
	}
	for _, b := range []*sqltest.Backend{f.hot, f.one} {
		mustExec(t, b.DB, "CREATE TABLE items "+itemsDDL)
		mustExec(t, b.DB, "CREATE VIEW item_names AS SELECT name FROM items")
	}
	tt := config.TimeTable{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}}
	if tune != nil {
		tune(&tt)
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: f.hot.DSN}, {Name: "cold", Role: "cold", DSN: f.cold.DSN}},
		Routes:     map[string]string{"audit_log": "cold"},
		TimeTables: []config.TimeTable{tt},
	}
	now := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	f.c, f.db = c, sql.OpenDB(c)
	t.Cleanup(func() { f.db.Close() })
	return f
}

// readText runs query on db and returns its column names and rows as text (NULL as "NULL").
func readText(t *testing.T, db *sql.DB, query string, args ...any) ([]string, [][]string) {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
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
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = string(v)
			if v == nil {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return cols, out
}
