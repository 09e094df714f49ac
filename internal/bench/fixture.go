package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // the baseline driver, "mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
)

// Now is the fixture's clock: the hot window (current month + 2) starts on 2025-01-01.
var Now = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)

// months of the orders tables: 2024-11 and 2024-12 on cold, 2025-01..03 on hot.
var months = []time.Time{
	time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
}

const (
	items        = 1000 // rows of items
	rowsPerTable = 2000 // rows of each orders table
)

// TimeTables is the fixture's one time-sharded table as the router takes it: orders by
// order_time, hot for the current month and the two before (Open configures the same).
func TimeTables() []config.TimeTable {
	return []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}}
}

// ShardMetadata lists the fixture's orders tables.
func ShardMetadata() metadata.StaticSource {
	var src metadata.StaticSource
	for _, m := range months {
		src = append(src, metadata.Table{Name: "orders_" + m.Format("200601"), Min: m, Max: m.AddDate(0, 1, 0).Add(-time.Second), Hot: !m.Before(months[2])})
	}
	return src
}

// Load creates the fixture's tables in two empty databases: items (1000 rows) on hot, and the
// monthly orders tables (2000 rows each), the older two on cold and the newer three on hot.
func Load(ctx context.Context, hot, cold *sql.DB) error {
	stmts := map[*sql.DB][]string{hot: {"CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64) NOT NULL)"}}
	var vals []string
	for i := 0; i < items; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'item %d')", i, i))
	}
	stmts[hot] = append(stmts[hot], "INSERT INTO items VALUES "+strings.Join(vals, ","))
	for _, m := range months {
		db := cold
		if !m.Before(months[2]) {
			db = hot
		}
		name := "orders_" + m.Format("200601")
		vals = vals[:0]
		for i := 0; i < rowsPerTable; i++ {
			at := m.Add(time.Duration(i) * 20 * time.Minute)
			vals = append(vals, fmt.Sprintf("(%d, %d, %d.%02d, '%s')", i, i%50, i%97, i%100, at.Format(time.DateTime)))
		}
		stmts[db] = append(stmts[db],
			"CREATE TABLE "+name+" (id INT PRIMARY KEY, user_id INT NOT NULL, amount DECIMAL(10,2) NOT NULL, order_time DATETIME NOT NULL, KEY (order_time))",
			"INSERT INTO "+name+" VALUES "+strings.Join(vals, ","))
	}
	for db, list := range stmts {
		for _, s := range list {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("bench: loading the fixture: %w", err)
			}
		}
	}
	return nil
}

// Fixture is the handles the measures compare, over the databases Load filled.
type Fixture struct {
	// Raw are plain go-sql-driver/mysql handles, by backend ("hot", "cold").
	Raw map[string]*sql.DB
	// Plain is obroute with hot's plain go-sql-driver DSN: one backend, no rule.
	Plain *sql.DB
	// Routed is obroute over hot and cold with orders time-sharded; Connector is its connector.
	Routed    *sql.DB
	Connector *connector.Connector
}

// Open opens the fixture's handles over the databases of hotDSN and coldDSN (go-sql-driver
// DSNs), each keeping up to 128 idle connections.
func Open(hotDSN, coldDSN string) (*Fixture, error) {
	f := &Fixture{Raw: map[string]*sql.DB{}}
	for name, dsn := range map[string]string{"hot": hotDSN, "cold": coldDSN} {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Raw[name] = db
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hotDSN}, {Name: "cold", Role: "cold", DSN: coldDSN}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	var err error
	if f.Connector, err = connector.New(cfg, connector.WithMetadataSource(ShardMetadata()), connector.WithClock(func() time.Time { return Now })); err != nil {
		f.Close()
		return nil, err
	}
	f.Routed = sql.OpenDB(f.Connector)
	plain, err := config.ParseDSN(hotDSN)
	if err != nil {
		f.Close()
		return nil, err
	}
	pc, err := connector.New(plain)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Plain = sql.OpenDB(pc)
	for _, db := range f.handles() {
		db.SetMaxIdleConns(128)
	}
	return f, nil
}

func (f *Fixture) handles() []*sql.DB {
	var out []*sql.DB
	for _, db := range []*sql.DB{f.Raw["hot"], f.Raw["cold"], f.Plain, f.Routed} {
		if db != nil {
			out = append(out, db)
		}
	}
	return out
}

// DropIdle closes the idle connections of every handle (the server's max_connections is shared
// by the measures one after the other).
func (f *Fixture) DropIdle() {
	for _, db := range f.handles() {
		db.SetMaxIdleConns(0)
		db.SetMaxIdleConns(128)
	}
}

// Close closes every handle.
func (f *Fixture) Close() {
	for _, db := range f.handles() {
		db.Close()
	}
}
