package routing

import (
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// day parses "2006-01-02" or "2006-01-02 15:04:05[.999999]" as UTC for test tables.
func day(s string) time.Time {
	layout := time.DateOnly
	if len(s) > len(layout) {
		layout = "2006-01-02 15:04:05.999999"
	}
	t, err := time.ParseInLocation(layout, s, time.UTC)
	if err != nil {
		panic(err)
	}
	return t
}

// monthlyTables returns orders_YYYYMM tables from first to last month (inclusive), hot from hotFrom.
func monthlyTables(first, last, hotFrom string) []metadata.Table {
	var out []metadata.Table
	hot := day(hotFrom)
	for m := day(first); !m.After(day(last)); m = m.AddDate(0, 1, 0) {
		out = append(out, metadata.Table{
			Name: fmt.Sprintf("orders_%04d%02d", m.Year(), m.Month()),
			Min:  m, Max: m.AddDate(0, 1, 0).Add(-time.Second), Hot: !m.Before(hot),
		})
	}
	return out
}

// fixture is a router over hot and cold backends, with a settable clock and snapshot.
type fixture struct {
	r    *Router
	now  time.Time
	snap *metadata.Snapshot
}

func newFixture(t testing.TB, tt config.TimeTable, tables []metadata.Table, now string) *fixture {
	t.Helper()
	return newFixtureWith(t, tt, tables, now, nil)
}

// newFixtureWith is newFixture with a change to the time configuration (nil: none).
func newFixtureWith(t testing.TB, tt config.TimeTable, tables []metadata.Table, now string, change func(*TimeConfig)) *fixture {
	t.Helper()
	f := bareFixture(t, tt, tables, now, change)
	if len(tables) > 0 {
		declareDatetime(f.r, tables[0].Name)
	}
	return f
}

// bareFixture is newFixtureWith with no shard-key column declared: the key's type is unknown.
func bareFixture(t testing.TB, tt config.TimeTable, tables []metadata.Table, now string, change func(*TimeConfig)) *fixture {
	t.Helper()
	f := &fixture{now: day(now)}
	snap, err := metadata.NewSnapshot(tables, f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.snap = snap
	tc := &TimeConfig{
		Tables:   []config.TimeTable{tt},
		Snapshot: func() *metadata.Snapshot { return f.snap },
		Clock:    func() time.Time { return f.now },
	}
	if change != nil {
		change(tc)
	}
	r, err := New(Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"},
		Time:     tc,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// declareDatetime records the shard-key columns of tables as DATETIME(0), as the connector does
// once it has read them. A fixture declares its oldest table only: the logical table's type is
// then known (DATETIME), and the other tables' precisions are left for tests to give.
func declareDatetime(r *Router, tables ...string) {
	cols := map[string]ShardKeyColumn{}
	for _, t := range tables {
		cols[t] = ShardKeyColumn{Type: ShardKeyDatetime, DataType: "datetime"}
	}
	r.SetShardKeyColumns(cols)
}

// precisions records DATETIME(n) shard-key columns, n per table.
func precisions(r *Router, digits map[string]int) {
	cols := map[string]ShardKeyColumn{}
	for t, n := range digits {
		cols[t] = ShardKeyColumn{Type: ShardKeyDatetime, Digits: n, DataType: "datetime"}
	}
	r.SetShardKeyColumns(cols)
}

func ordersTable() config.TimeTable {
	return config.TimeTable{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}
}

// standard: July 2024 .. March 2025, hot from January 2025, today 2025-03-15.
func standard(t testing.TB) *fixture {
	return newFixture(t, ordersTable(), monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00")
}

// planTables lists the tables of p's targets, in order.
func planTables(p *Plan) []string {
	var out []string
	for _, tg := range p.Targets {
		out = append(out, tg.Tables...)
	}
	return out
}

func args(vs ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vs))
	for i, v := range vs {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func (f *fixture) route(sql string, a []driver.NamedValue, in Input) (*Plan, error) {
	in.Statement = f.r.Analyze(sql)
	in.Args = a
	in.Explain = true
	return f.r.Route(in)
}
