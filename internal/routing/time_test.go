package routing

import (
	"database/sql/driver"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

type wantTarget struct {
	backend string
	sql     string
	args    []any
}

func checkTargets(t *testing.T, p *Plan, want []wantTarget) {
	t.Helper()
	if len(p.Targets) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(p.Targets), len(want), p.Targets)
	}
	for i, w := range want {
		g := p.Targets[i]
		if g.Backend != w.backend || g.SQL != w.sql {
			t.Errorf("target %d:\n got %s: %s\nwant %s: %s", i, g.Backend, g.SQL, w.backend, w.sql)
		}
		var got []any
		for j, a := range g.Args {
			if a.Ordinal != j+1 {
				t.Errorf("target %d arg %d has ordinal %d", i, j, a.Ordinal)
			}
			got = append(got, a.Value)
		}
		if !reflect.DeepEqual(got, w.args) {
			t.Errorf("target %d args %v, want %v", i, got, w.args)
		}
	}
}

func TestRewrite(t *testing.T) {
	cases := []struct {
		name  string
		sql   string
		args  []driver.NamedValue
		class Class
		want  []wantTarget
		merge bool
	}{
		{
			name: "one hot table: no merge, the statement itself clamped", class: ClassHotOnly,
			sql:  "SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = ?",
			args: args("2025-03-02", "2025-03-03", 7),
			want: []wantTarget{{"hot", "select id, amount from orders_202503 where order_time >= ? and order_time < ? and user_id = ? and orders_202503.order_time >= '2025-03-01 00:00:00'", []any{"2025-03-02", "2025-03-03", 7}}},
		},
		{
			name: "one cold table: tagged cold_query", class: ClassColdOnly,
			sql:  "select o.id from orders as o where o.order_time between '2024-09-03' and '2024-09-04'",
			want: []wantTarget{{"cold", "/* cold_query */ select o.id from orders_202409 as o where o.order_time between '2024-09-03' and '2024-09-04' and o.order_time >= '2024-09-01 00:00:00' and o.order_time < '2024-10-01 00:00:00'", nil}},
		},
		{
			name: "split: one statement per backend, union all, args repeated per leg", class: ClassSplit, merge: true,
			sql:  "select id from orders where order_time >= ? and order_time < ? order by id limit 5, 10",
			args: args("2024-12-20", "2025-02-01"),
			want: []wantTarget{
				{"cold", "/* cold_query */ select id, " + weightItem("id", 2) + ", (id) + 0 as _obroute_3 from orders_202412 where order_time >= ? and order_time < ? and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00' order by id asc limit 15", []any{"2024-12-20", "2025-02-01"}},
				{"hot", "select id, " + weightItem("id", 2) + ", (id) + 0 as _obroute_3 from orders_202501 where order_time >= ? and order_time < ? and orders_202501.order_time >= '2025-01-01 00:00:00' and orders_202501.order_time < '2025-02-01 00:00:00' order by id asc limit 15", []any{"2024-12-20", "2025-02-01"}},
			},
		},
		{
			name: "several tables on one backend: parenthesised legs, outer order by position and limit", class: ClassColdOnly, merge: true,
			sql:  "select id, amount from orders where order_time >= '2024-10-15' and order_time < '2024-12-01' and amount > ? order by amount desc, id limit ?",
			args: args(5, int64(3)),
			want: []wantTarget{
				{"cold", "/* cold_query */ (select id, amount, " + weightItem("amount", 3) + ", " + weightItem("id", 4) + ", (amount) + 0 as _obroute_5, (id) + 0 as _obroute_6 from orders_202410 where order_time >= '2024-10-15' and order_time < '2024-12-01' and amount > ? and orders_202410.order_time >= '2024-10-01 00:00:00' and orders_202410.order_time < '2024-11-01 00:00:00' order by amount desc, id asc limit 3) union all (select id, amount, " + weightItem("amount", 3) + ", " + weightItem("id", 4) + ", (amount) + 0 as _obroute_5, (id) + 0 as _obroute_6 from orders_202411 where order_time >= '2024-10-15' and order_time < '2024-12-01' and amount > ? and orders_202411.order_time >= '2024-11-01 00:00:00' and orders_202411.order_time < '2024-12-01 00:00:00' order by amount desc, id asc limit 3) order by 5 desc, 2 desc, 6 asc, 1 asc limit 3", []any{5, 5}},
			},
		},
		{
			name: "range before every table: no rows, newest table with its clamp and the statement's own condition", class: ClassHotOnly,
			sql:  "select count(*) from orders where order_time < '2020-01-01'",
			want: []wantTarget{{"hot", "select count(*) from orders_202503 where order_time < '2020-01-01' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}},
		},
		{
			name: "hints are not sent to the backend", class: ClassHotOnly,
			sql:  "/*+ OBROUTE(query_level=L1) */ select id from orders where order_time = '2025-03-10 08:00:00'",
			want: []wantTarget{{"hot", "select id from orders_202503 where order_time = '2025-03-10 08:00:00' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}},
		},
		{
			name: "qualified table keeps its schema", class: ClassHotOnly,
			sql:  "select orders.id from test.orders where orders.order_time > '2025-03-10'",
			want: []wantTarget{{"hot", "select orders_202503.id from test.orders_202503 where orders_202503.order_time > '2025-03-10' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}},
		},
		{
			name: "delete in the hot window", class: ClassHotOnly,
			sql:  "delete from orders where order_time < ? and order_time >= '2025-02-20'",
			args: args("2025-03-02"),
			want: []wantTarget{
				{"hot", "delete from orders_202502 where order_time < ? and order_time >= '2025-02-20' and orders_202502.order_time >= '2025-02-01 00:00:00' and orders_202502.order_time < '2025-03-01 00:00:00'", []any{"2025-03-02"}},
				{"hot", "delete from orders_202503 where order_time < ? and order_time >= '2025-02-20' and orders_202503.order_time >= '2025-03-01 00:00:00'", []any{"2025-03-02"}},
			},
		},
		{
			name: "multi-row insert split by table, args rebuilt per target", class: ClassHotOnly,
			sql:  "insert into orders (id, order_time, amount) values (1, ?, ?), (2, '2025-03-05', 3.5), (3, ?, 1) on duplicate key update amount = ?",
			args: args("2025-02-10 10:00:00", 9, time.Date(2025, 2, 11, 0, 0, 0, 0, time.UTC), 0),
			want: []wantTarget{
				{"hot", "insert into orders_202502(id, order_time, amount) values (1, ?, ?), (3, ?, 1) on duplicate key update amount = ?", []any{"2025-02-10 10:00:00", 9, time.Date(2025, 2, 11, 0, 0, 0, 0, time.UTC), 0}},
				{"hot", "insert into orders_202503(id, order_time, amount) values (2, '2025-03-05', 3.5) on duplicate key update amount = ?", []any{0}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := standard(t)
			// Their unique keys hold the shard key: ON DUPLICATE KEY UPDATE is exact.
			f.r.SetUniqueKeys(map[string]string{"orders_202502": "", "orders_202503": ""})
			p, err := f.route(c.sql, c.args, Input{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != UsePartitionLocationLookup || p.Class != c.class {
				t.Errorf("type %s class %s, want %s %s", p.Type, p.Class, UsePartitionLocationLookup, c.class)
			}
			if (p.Merge != nil) != c.merge {
				t.Errorf("merge %+v, want merge=%v", p.Merge, c.merge)
			}
			checkTargets(t, p, c.want)
		})
	}
}

func TestRoutePrompts(t *testing.T) {
	f := standard(t)
	p, err := f.route("select id from orders where order_time >= '2024-12-01' and order_time < '2025-03-15'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	want := "range [2024-12-01 00:00:00, 2025-03-15 00:00:00) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into 3 hot and 1 cold sub-queries"
	if len(p.Prompts) != 1 || p.Prompts[0] != want || p.Level != hint.L2 {
		t.Errorf("prompts %q level %s, want [%q] L2", p.Prompts, p.Level, want)
	}
	p, err = f.route("select id from orders where order_time >= '2025-02-01'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Prompts, " | "); !strings.HasSuffix(got, " | did not touch the history store") || p.Level != hint.L1 {
		t.Errorf("prompts %q level %s, want the history store untouched at L1", got, p.Level)
	}
}

func TestLevelsAndRules(t *testing.T) {
	budgets := config.Budgets{L1: 100 * time.Millisecond, L2: 2 * time.Second, L3: 10 * time.Second}
	cases := []struct {
		name    string
		tt      func(*config.TimeTable)
		sql     string
		hints   hint.Set
		level   hint.Level
		class   Class
		budget  time.Duration
		err     error
		fix     string
		prompts string
	}{
		{name: "derived L1", sql: "select id from orders where order_time >= '2025-01-01'", level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "derived L2", sql: "select id from orders where order_time >= '2024-12-31 23:59:59'", level: hint.L2, class: ClassSplit, budget: budgets.L2},
		{name: "derived L3", sql: "select id from orders where order_time < '2025-01-01'", level: hint.L3, class: ClassColdOnly, budget: budgets.L3},
		{name: "declared L1 inside the window", sql: "select id from orders where order_time > '2025-02-01'", hints: hint.Set{Level: hint.L1}, level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "declared L1 reaching cold is refused", sql: "select id from orders where order_time >= '2024-12-31'", hints: hint.Set{Level: hint.L1}, err: ErrLevelViolation, fix: "declare query_level=L2"},
		{name: "declared L1 without lower bound is refused", sql: "select id from orders where order_time < '2025-03-01'", hints: hint.Set{Level: hint.L1}, err: ErrLevelViolation, fix: "order_time >= '2025-01-01 00:00:00'"},
		{name: "declared L1 in comment", sql: "/*+ OBROUTE(query_level=L1) */ select id from orders where order_time >= '2024-11-01'", err: ErrLevelViolation, fix: "declare query_level=L2"},
		{name: "declared L2 on hot data keeps L2", sql: "select id from orders where order_time > '2025-02-01'", hints: hint.Set{Level: hint.L2}, level: hint.L2, class: ClassHotOnly, budget: budgets.L2},
		{name: "declared L3 on history", sql: "select id from orders where order_time < '2024-10-01'", hints: hint.Set{Level: hint.L3}, level: hint.L3, class: ClassColdOnly, budget: budgets.L3},
		{name: "declared L3 reaching the hot window is refused", sql: "select id from orders where order_time < '2025-01-02'", hints: hint.Set{Level: hint.L3}, err: ErrLevelViolation, fix: "end the range before '2025-01-01 00:00:00'"},
		{name: "no range is refused", sql: "select id from orders where user_id = 3", err: ErrNoTimeRange, fix: "add a range such as order_time >= ? AND order_time < ?"},
		{name: "or with unbounded branch is refused", sql: "select id from orders where order_time > '2025-03-01' or user_id = 3", err: ErrNoTimeRange, fix: "add a range"},
		{name: "expression bound explains itself", sql: "select id from orders where order_time > created_at - interval 1 day", err: ErrNoTimeRange, fix: "is not a comparison with a literal, a ? argument or a constant time expression obroute folds"},
		{name: "default range applied and said", tt: func(tt *config.TimeTable) { tt.DefaultRange = 7 * 24 * time.Hour }, sql: "select id from orders where user_id = 3", level: hint.L1, class: ClassHotOnly, budget: budgets.L1, prompts: "applied the configured default range (168h0m0s back from now); range [2025-03-08 12:00:00, +inf)"},
		{name: "function on shard key", sql: "select id from orders where date(order_time) = '2025-03-15'", err: ErrShardKeyFunction, fix: "instead of DATE(order_time)"},
		{name: "cold needs cold_query when configured", tt: func(tt *config.TimeTable) { tt.RequireColdQuery = true }, sql: "select id from orders where order_time > '2024-12-01'", err: ErrColdQueryRequired, fix: "cold_query=true"},
		{name: "cold_query hint grants cold access", tt: func(tt *config.TimeTable) { tt.RequireColdQuery = true }, sql: "select id from orders where order_time > '2024-12-01'", hints: hint.Set{ColdQuery: true}, level: hint.L2, class: ClassSplit, budget: budgets.L2},
		{name: "hot reads need no cold_query", tt: func(tt *config.TimeTable) { tt.RequireColdQuery = true }, sql: "select id from orders where order_time > '2025-02-01'", level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "cold write refused", sql: "update orders set amount = 0 where order_time < '2024-10-01'", err: ErrColdWrite, fix: "allow_cold_writes"},
		{name: "cold write allowed by config", tt: func(tt *config.TimeTable) { tt.AllowColdWrites = true }, sql: "delete from orders where order_time between '2024-09-01' and '2024-09-02'", level: hint.L3, class: ClassColdOnly, budget: budgets.L3},
		{name: "write spanning backends refused", tt: func(tt *config.TimeTable) { tt.AllowColdWrites = true }, sql: "delete from orders where order_time > '2024-12-30'", err: ErrCrossBackendWrite, fix: "one statement per backend"},
		{name: "insert spanning backends refused", tt: func(tt *config.TimeTable) { tt.AllowColdWrites = true }, sql: "insert into orders (id, order_time) values (1, '2024-12-01'), (2, '2025-01-01')", err: ErrCrossBackendWrite, fix: "one statement per backend"},
		{name: "insert into the cold store refused", sql: "insert into orders (id, order_time) values (1, '2024-12-01')", err: ErrColdWrite, fix: "allow_cold_writes"},
		{name: "insert without a covering table", sql: "insert into orders (id, order_time) values (1, '2026-01-01')", err: ErrNoShardTable, fix: "add or widen a table in shard_metadata"},
		{name: "insert without column list", sql: "insert into orders values (1, '2025-03-01')", err: ErrNoTimeRange, fix: "must name its columns"},
		{name: "update with limit across tables refused", sql: "update orders set amount = 0 where order_time > '2025-02-01' limit 10", err: ErrNotMergeable, fix: "drop ORDER BY/LIMIT"},
		{name: "delete with order by across tables refused", sql: "delete from orders where order_time > '2025-02-01' order by id", err: ErrNotMergeable, fix: "DELETE … ORDER BY/LIMIT"},
		{name: "update with limit in one table", sql: "update orders set amount = 0 where order_time > '2025-03-02' limit 10", level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "update of the shard key refused", sql: "update orders set order_time = '2025-03-03' where order_time > '2025-03-02'", err: ErrNotMergeable, fix: "DELETE and INSERT"},
		{name: "write without a range refused despite default_range", tt: func(tt *config.TimeTable) { tt.DefaultRange = 7 * 24 * time.Hour }, sql: "update orders set amount = 0 where user_id = 3", err: ErrNoTimeRange, fix: "default_range never applies to a write"},
		{name: "delete without a range refused despite default_range", tt: func(tt *config.TimeTable) { tt.DefaultRange = 7 * 24 * time.Hour }, sql: "delete from orders", err: ErrNoTimeRange, fix: "default_range never applies to a write"},
		{name: "REPLACE before the unique keys are read refused", sql: "replace into orders (id, order_time) values (1, '2025-03-01')", err: ErrNotMergeable, fix: "which obroute has not read"},
		{name: "INSERT IGNORE before the unique keys are read refused", sql: "insert ignore into orders (id, order_time) values (1, '2025-03-01')", err: ErrNotMergeable, fix: "INSERT IGNORE into orders needs the unique keys of orders_202503"},
		{name: "ON DUPLICATE KEY UPDATE of the shard key refused", sql: "insert into orders (id, order_time) values (1, '2025-03-01') on duplicate key update order_time = '2025-02-01'", err: ErrNotMergeable, fix: "sets the shard key order_time to '2025-02-01'"},
		{name: "joined update of another table across tables refused", sql: "update orders o join users u on u.id = o.user_id set u.n = 1 where o.order_time > '2025-02-01'", err: ErrNotMergeable, fix: "qualify every assigned column with o"},
		{name: "joined update of an unqualified column across tables refused", sql: "update orders join users u on u.id = orders.user_id set n = 1 where orders.order_time > '2025-02-01'", err: ErrNotMergeable, fix: "sets n, which is not qualified"},
		{name: "joined update of the sharded table's columns across tables", sql: "update orders o join users u on u.id = o.user_id set o.amount = u.n where o.order_time > '2025-02-01'", level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "joined update of another table in one table", sql: "update orders o join users u on u.id = o.user_id set u.n = 1 where o.order_time > '2025-03-02'", level: hint.L1, class: ClassHotOnly, budget: budgets.L1},
		{name: "update of another table reading the sharded one refused", sql: "update users set n = (select count(*) from orders where order_time > '2025-03-01')", err: ErrNotMergeable, fix: "the UPDATE reads the time-sharded table orders in a subquery"},
		{name: "join of two sharded tables refused", tt: nil, sql: "select 1 from orders a join orders b on a.id = b.id where a.order_time > '2025-03-01'", err: ErrTimeShardedJoin, fix: "query each part on its own"},
		{name: "sharded table in a subquery refused", sql: "select * from users where id in (select user_id from orders where order_time > '2025-03-01')", err: ErrNotMergeable, fix: "top-level FROM"},
		{name: "sharded table on the optional side of an outer join", sql: "select * from users u left join orders o on o.user_id = u.id where o.order_time > '2025-03-01'", err: ErrNotMergeable, fix: "preserved side"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := ordersTable()
			tt.Budgets = budgets
			if c.tt != nil {
				c.tt(&tt)
			}
			f := newFixture(t, tt, monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00")
			p, err := f.route(c.sql, nil, Input{Hints: c.hints})
			if c.err != nil {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.fix) {
					t.Fatalf("error %v\nwant %v saying %q", err, c.err, c.fix)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Level != c.level || p.Class != c.class || p.Budget != c.budget {
				t.Errorf("level %s class %s budget %s, want %s %s %s", p.Level, p.Class, p.Budget, c.level, c.class, c.budget)
			}
			if c.prompts != "" && !strings.Contains(strings.Join(p.Prompts, " | "), c.prompts) {
				t.Errorf("prompts %q, want %q", p.Prompts, c.prompts)
			}
		})
	}
}

func TestTransactionPinsTimeRoutes(t *testing.T) {
	f := standard(t)
	sess := &SessionState{InTransaction: true, TxBackend: "hot"}
	if _, err := f.route("select id from orders where order_time > '2024-12-15'", nil, Input{Session: sess}); !errors.Is(err, ErrCrossBackendTx) {
		t.Errorf("split read in a hot transaction: %v, want ErrCrossBackendTx", err)
	}
	p, err := f.route("select id from orders where order_time > '2025-02-15'", nil, Input{Session: sess})
	if err != nil || p.Targets[0].Backend != "hot" {
		t.Errorf("hot read in a hot transaction: %v %+v", err, p)
	}
}

// The hot window follows the injected clock at each statement: no restart, no re-analysis.
func TestBoundaryMovesWithClock(t *testing.T) {
	f := standard(t)
	const q = "select id from orders where order_time >= '2025-01-15' and order_time < '2025-01-20'"
	p, err := f.route(q, nil, Input{Hints: hint.Set{Level: hint.L1}})
	if err != nil {
		t.Fatalf("in March, January is hot: %v", err)
	}
	if p.Level != hint.L1 {
		t.Errorf("level %s", p.Level)
	}
	f.now = day("2025-04-01 00:00:00") // the month rolls over: boundary 2025-02-01
	if _, err := f.route(q, nil, Input{Hints: hint.Set{Level: hint.L1}}); !errors.Is(err, ErrLevelViolation) || !strings.Contains(err.Error(), "2025-02-01 00:00:00") {
		t.Errorf("in April, January is before the boundary: %v", err)
	}
	p, err = f.route(q, nil, Input{})
	if err != nil || p.Level != hint.L2 {
		t.Errorf("undeclared level in April: %v %v, want L2 (table still on hot, range before boundary)", err, p)
	}
	// The migration job moves January to the history store; a refreshed snapshot is followed.
	tables := monthlyTables("2024-07-01", "2025-03-01", "2025-02-01")
	if f.snap, err = metadata.NewSnapshot(tables, f.now); err != nil {
		t.Fatal(err)
	}
	p, err = f.route(q, nil, Input{})
	if err != nil || p.Class != ClassColdOnly || p.Targets[0].Backend != "cold" || p.Level != hint.L3 {
		t.Errorf("after migration: %v %+v", err, p)
	}
}

func TestTableLocation(t *testing.T) {
	tables := monthlyTables("2025-01-01", "2025-03-01", "2025-01-01")
	tables[0].Location = "cold" // moved to the history store although still marked hot
	f := newFixture(t, ordersTable(), tables, "2025-03-15")
	p, err := f.route("select id from orders where order_time > '2025-01-20'", nil, Input{})
	if err != nil || p.Class != ClassSplit || p.Targets[0].Backend != "cold" || !p.Targets[0].Cold {
		t.Errorf("%v %+v", err, p)
	}
	tables[0].Location = "nowhere"
	f = newFixture(t, ordersTable(), tables, "2025-03-15")
	if _, err := f.route("select id from orders where order_time > '2025-01-20'", nil, Input{}); !errors.Is(err, ErrUnknownBackend) || !strings.Contains(err.Error(), "fix the metadata row") {
		t.Errorf("unknown location: %v", err)
	}
}

func TestTimeConfigValidate(t *testing.T) {
	snap := func() *metadata.Snapshot { return nil }
	cases := []struct {
		name string
		cfg  TimeConfig
		fix  string
	}{
		{"no snapshot", TimeConfig{Tables: []config.TimeTable{ordersTable()}}, "Snapshot is nil"},
		{"bad table", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "or ders", ShardKey: "t", HotWindow: config.HotWindow{Days: 1}}}}, "plain identifier"},
		{"shard key not an identifier", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "orders", ShardKey: "t >= 0 or 1", HotWindow: config.HotWindow{Days: 1}}}}, "plain column name"},
		{"table with a quote", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "orders`", ShardKey: "t", HotWindow: config.HotWindow{Days: 1}}}}, "plain identifier"},
		{"no shard key", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "orders", HotWindow: config.HotWindow{Days: 1}}}}, "shard_key"},
		{"no window", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "orders", ShardKey: "t"}}}, "set exactly one"},
		{"twice", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{ordersTable(), ordersTable()}}, "configured twice"},
		{"negative default", TimeConfig{Snapshot: snap, Tables: []config.TimeTable{{Table: "orders", ShardKey: "t", HotWindow: config.HotWindow{Days: 1}, DefaultRange: -1}}}, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if !errors.Is(err, ErrTimeConfig) || !strings.Contains(err.Error(), c.fix) {
				t.Errorf("%v, want ErrTimeConfig saying %q", err, c.fix)
			}
		})
	}
}

// The physical tables of orders are orders_<digits…>: orders_items_202502 belongs to another
// logical table and is neither read nor written by statements on orders.
func TestOtherLogicalTablesAreNotTouched(t *testing.T) {
	tables := monthlyTables("2024-07-01", "2025-03-01", "2025-01-01")
	for _, tb := range monthlyTables("2024-07-01", "2025-03-01", "2025-01-01") {
		tb.Name = strings.Replace(tb.Name, "orders_", "orders_items_", 1)
		tables = append(tables, tb)
	}
	f := newFixture(t, ordersTable(), tables, "2025-03-15 12:00:00")
	p, err := f.route("select id from orders where order_time >= '2024-12-20' and order_time < '2025-02-10'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, tg := range p.Targets {
		read = append(read, tg.Tables...)
		if strings.Contains(tg.SQL, "items") {
			t.Errorf("%s reads another logical table: %s", tg.Backend, tg.SQL)
		}
	}
	if want := []string{"orders_202412", "orders_202501", "orders_202502"}; !reflect.DeepEqual(read, want) {
		t.Errorf("read %v, want %v", read, want)
	}
	p, err = f.route("insert into orders (id, order_time) values (1, '2025-02-10')", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "insert into orders_202502(id, order_time) values (1, '2025-02-10')", nil}})
}

// time.Time arguments are sent by go-sql-driver as wall clock in the DSN's loc: routing reads
// them in TimeConfig.Location. Strings and bytes are wall clock already.
func TestTimeArgsReadInBackendLocation(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	f := newFixtureWith(t, ordersTable(), monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00",
		func(c *TimeConfig) { c.Location = shanghai })
	evening := time.Date(2025, 1, 31, 20, 0, 0, 0, time.UTC) // 2025-02-01 04:00 in Shanghai
	cases := []struct {
		name   string
		sql    string
		args   []driver.NamedValue
		tables []string
	}{
		{"time.Time in UTC", "select id from orders where order_time >= ? and order_time < ?",
			args(evening, evening.Add(time.Hour)), []string{"orders_202502"}},
		{"time.Time in another zone", "select id from orders where order_time >= ? and order_time < ?",
			args(evening.In(time.FixedZone("UTC-5", -5*3600)), evening.Add(time.Hour)), []string{"orders_202502"}},
		{"string is wall clock", "select id from orders where order_time >= ? and order_time < ?",
			args("2025-01-31 20:00:00", "2025-01-31 21:00:00"), []string{"orders_202501"}},
		{"bytes are wall clock", "select id from orders where order_time >= ? and order_time < ?",
			args([]byte("2025-01-31 20:00:00"), []byte("2025-01-31 21:00:00")), []string{"orders_202501"}},
		{"insert of a time.Time", "insert into orders (id, order_time) values (1, ?)", args(evening), []string{"orders_202502"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.route(c.sql, c.args, Input{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range p.Targets {
				got = append(got, tg.Tables...)
				for i, a := range tg.Args { // the backend gets the arguments as given
					if !reflect.DeepEqual(a.Value, c.args[i%len(c.args)].Value) {
						t.Errorf("argument %d sent as %v, given %v", i, a.Value, c.args[i%len(c.args)].Value)
					}
				}
			}
			if !reflect.DeepEqual(got, c.tables) {
				t.Errorf("tables %v, want %v", got, c.tables)
			}
		})
	}
}

// The hot-window boundary is computed on the calendar of the shard-key times (UTC unless
// TimeConfig.Location says otherwise), not on the clock's time zone.
func TestBoundaryUsesTheDataCalendar(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	const q = "select id from orders where order_time >= '2025-01-15' and order_time < '2025-01-20'"
	// 2025-03-31 20:00 UTC is already April in Shanghai; in UTC, January is still hot.
	f := standard(t)
	f.now = time.Date(2025, 3, 31, 20, 0, 0, 0, time.UTC).In(shanghai)
	if _, err := f.route(q, nil, Input{Hints: hint.Set{Level: hint.L1}}); err != nil {
		t.Errorf("clock in UTC+8, data in UTC: %v", err)
	}
	// With the data in Shanghai wall clock, it is April there: January is before the boundary.
	f = newFixtureWith(t, ordersTable(), monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00",
		func(c *TimeConfig) { c.Location = shanghai })
	f.now = time.Date(2025, 3, 31, 20, 0, 0, 0, time.UTC)
	if _, err := f.route(q, nil, Input{Hints: hint.Set{Level: hint.L1}}); !errors.Is(err, ErrLevelViolation) || !strings.Contains(err.Error(), "2025-02-01 00:00:00") {
		t.Errorf("data in UTC+8 on 2025-04-01: %v, want the boundary 2025-02-01", err)
	}
}

// LIMIT ? and OFFSET ? of a split statement take any integer argument, and refuse what is not
// a row count instead of reading it as 0.
func TestSplitLimitArguments(t *testing.T) {
	const q = "select id from orders where order_time >= '2024-12-20' and order_time < '2025-02-01' order by id limit ? offset ?"
	cases := []struct {
		name          string
		limit, offset any
		wantLimit     int64
		wantOffset    int64
		err           string
	}{
		{"int64", int64(3), int64(2), 3, 2, ""},
		{"int", 3, 2, 3, 2, ""},
		{"int8", int8(3), int8(2), 3, 2, ""},
		{"int16", int16(3), int16(2), 3, 2, ""},
		{"int32", int32(3), int32(2), 3, 2, ""},
		{"uint", uint(3), uint(2), 3, 2, ""},
		{"uint8", uint8(3), uint8(2), 3, 2, ""},
		{"uint16", uint16(3), uint16(2), 3, 2, ""},
		{"uint32", uint32(3), uint32(2), 3, 2, ""},
		{"uint64", uint64(3), uint64(2), 3, 2, ""},
		{"uint64 beyond int64 means no practical limit", uint64(math.MaxUint64), uint64(2), math.MaxInt64, 2, ""},
		{"decimal string", "3", "2", 3, 2, ""},
		{"decimal bytes", []byte("3"), []byte("2"), 3, 2, ""},
		{"negative", int64(-1), int64(0), 0, 0, "argument 1 (-1) for LIMIT"},
		{"negative offset", int64(3), -2, 0, 0, "argument 2 (-2) for OFFSET"},
		{"non-integer string", "1.5", int64(0), 0, 0, "argument 1 (\"1.5\") for LIMIT"},
		{"text", "ten", int64(0), 0, 0, "argument 1 (\"ten\") for LIMIT"},
		{"float", 3.0, int64(0), 0, 0, "argument 1 for LIMIT is a float64"},
		{"null", nil, int64(0), 0, 0, "argument 1 for LIMIT is NULL"},
		{"bool", true, int64(0), 0, 0, "argument 1 for LIMIT is a bool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := standard(t)
			p, err := f.route(q, args(c.limit, c.offset), Input{})
			if c.err != "" {
				if !errors.Is(err, ErrBadLimit) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%v, want ErrBadLimit saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Merge.Limit != c.wantLimit || p.Merge.Offset != c.wantOffset {
				t.Errorf("merge LIMIT %d OFFSET %d, want %d %d", p.Merge.Limit, p.Merge.Offset, c.wantLimit, c.wantOffset)
			}
			legs := c.wantLimit + c.wantOffset
			if c.wantLimit == math.MaxInt64 {
				legs = math.MaxInt64 // saturated, not overflowed
			}
			if want := " limit " + strconv.FormatInt(legs, 10); !strings.HasSuffix(p.Targets[0].SQL, want) {
				t.Errorf("leg %s\nwant it to end with %q", p.Targets[0].SQL, want)
			}
		})
	}
}

// MySQL's idiom for "everything after the offset" is a LIMIT of 2^64-1.
func TestSplitLimitLargestLiteral(t *testing.T) {
	f := standard(t)
	p, err := f.route("select id from orders where order_time >= '2024-12-20' and order_time < '2025-02-01' order by id limit 5, 18446744073709551615", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Merge.Offset != 5 || p.Merge.Limit != math.MaxInt64 {
		t.Errorf("merge OFFSET %d LIMIT %d, want 5 and MaxInt64", p.Merge.Offset, p.Merge.Limit)
	}
}

// Rows with fractional seconds after a table's max_time second belong to that table: the clamp
// ends before max_time + 1s, and a range starting inside that second selects the table.
func TestFractionalSecondsAtTableEnd(t *testing.T) {
	f := standard(t)
	cases := []struct {
		name   string
		sql    string
		tables []string
	}{
		{"range starting inside the last second", "select id from orders where order_time >= '2024-12-31 23:59:59.5' and order_time < '2025-01-02'", []string{"orders_202412", "orders_202501"}},
		{"range after the last whole second", "select id from orders where order_time > '2024-12-31 23:59:59' and order_time < '2025-01-02'", []string{"orders_202412", "orders_202501"}},
		{"single instant inside the last second", "select id from orders where order_time = '2024-12-31 23:59:59.999999'", []string{"orders_202412"}},
		{"range ending at the next table's start", "select id from orders where order_time >= '2024-12-31 23:59:59.5' and order_time < '2025-01-01'", []string{"orders_202412"}},
		{"insert of a whole second", "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59')", []string{"orders_202501"}},
		{"insert of a fraction of a second inside a table", "insert into orders (id, order_time) values (1, '2025-01-31 23:59:58.5')", []string{"orders_202501"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.route(c.sql, nil, Input{Hints: hint.Set{ColdQuery: true}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range p.Targets {
				got = append(got, tg.Tables...)
			}
			if !reflect.DeepEqual(got, c.tables) {
				t.Errorf("tables %v, want %v", got, c.tables)
			}
		})
	}
}

// A fraction of a second inserted in a table's last second is stored truncated (MariaDB) or
// rounded (MySQL, or MariaDB with TIME_ROUND_FRACTIONAL) into a DATETIME column: the row may
// belong to either table, so the INSERT is refused rather than placed by a guess.
func TestInsertFractionInLastSecond(t *testing.T) {
	f := standard(t)
	_, err := f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.5')", nil, Input{})
	if !errors.Is(err, ErrNoTimeRange) || !strings.Contains(err.Error(), "between '2025-01-31 23:59:59.5' and '2025-02-01 00:00:00'") || !strings.Contains(err.Error(), "write the time with whole seconds") {
		t.Errorf("error %v, want ErrNoTimeRange naming both values and the fix", err)
	}
}

// Optimizer hints and comments inside the statement reach every sub-query; obroute's own hints,
// which lead the statement, do not.
func TestStatementHintsKept(t *testing.T) {
	cases := []struct {
		name string
		sql  string
		want []wantTarget
	}{
		{"one table", "/*+ OBROUTE(query_level=L1) */ select /*+ MAX_EXECUTION_TIME(1000) */ id from orders where order_time >= '2025-03-02'",
			[]wantTarget{{"hot", "select /*+ MAX_EXECUTION_TIME(1000) */ id from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}}},
		{"split", "select /*+ MAX_EXECUTION_TIME(1000) */ id from orders where order_time >= '2024-12-31' and order_time < '2025-01-02'",
			[]wantTarget{
				{"cold", "/* cold_query */ select /*+ MAX_EXECUTION_TIME(1000) */ id from orders_202412 where order_time >= '2024-12-31' and order_time < '2025-01-02' and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00'", nil},
				{"hot", "select /*+ MAX_EXECUTION_TIME(1000) */ id from orders_202501 where order_time >= '2024-12-31' and order_time < '2025-01-02' and orders_202501.order_time >= '2025-01-01 00:00:00' and orders_202501.order_time < '2025-02-01 00:00:00'", nil},
			}},
		{"union all of one backend", "select /*+ MAX_EXECUTION_TIME(1000) */ id from orders where order_time >= '2025-01-31' and order_time < '2025-02-02'",
			[]wantTarget{{"hot", "(select /*+ MAX_EXECUTION_TIME(1000) */ id from orders_202501 where order_time >= '2025-01-31' and order_time < '2025-02-02' and orders_202501.order_time >= '2025-01-01 00:00:00' and orders_202501.order_time < '2025-02-01 00:00:00') union all (select /*+ MAX_EXECUTION_TIME(1000) */ id from orders_202502 where order_time >= '2025-01-31' and order_time < '2025-02-02' and orders_202502.order_time >= '2025-02-01 00:00:00' and orders_202502.order_time < '2025-03-01 00:00:00')", nil}}},
		{"update", "update /*+ NO_MERGE() */ orders set amount = 0 where order_time >= '2025-03-02'",
			[]wantTarget{{"hot", "update /*+ NO_MERGE() */ orders_202503 set amount = 0 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}}},
		{"delete", "delete /* audit */ from orders where order_time >= '2025-03-02'",
			[]wantTarget{{"hot", "delete /* audit */ from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}}},
		{"insert", "insert /*+ SET_VAR(foreign_key_checks=OFF) */ into orders (id, order_time) values (1, '2025-03-02')",
			[]wantTarget{{"hot", "insert /*+ SET_VAR(foreign_key_checks=OFF) */ into orders_202503(id, order_time) values (1, '2025-03-02')", nil}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := standard(t).route(c.sql, nil, Input{})
			if err != nil {
				t.Fatal(err)
			}
			checkTargets(t, p, c.want)
		})
	}
}

// The qualifier of the shard key in the clamp is printed as an identifier, quoted when needed.
func TestClampQuotesTheAlias(t *testing.T) {
	p, err := standard(t).route("select `my o`.id from orders as `my o` where `my o`.order_time >= '2025-03-02'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "select `my o`.id from orders_202503 as `my o` where `my o`.order_time >= '2025-03-02' and `my o`.order_time >= '2025-03-01 00:00:00'", nil}})
}

// A NUL byte in a kept comment is not read as a template marker.
func TestCommentWithNulByte(t *testing.T) {
	p, err := standard(t).route("select /* a\x00Tb */ id from orders where order_time >= '2025-03-02'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "select /* a Tb */ id from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}})
}

// When one configured logical table's name extends another's with _<digit> (stats and
// stats_5min), the tables of the longer one are not tables of the shorter one.
func TestLongerLogicalNameOwnsItsTables(t *testing.T) {
	var tables []metadata.Table
	for _, prefix := range []string{"stats_", "stats_5min_"} {
		for _, tb := range monthlyTables("2025-01-01", "2025-03-01", "2025-01-01") {
			tb.Name = strings.Replace(tb.Name, "orders_", prefix, 1)
			tables = append(tables, tb)
		}
	}
	snap, err := metadata.NewSnapshot(tables, day("2025-03-15"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"},
		Time: &TimeConfig{
			Tables: []config.TimeTable{
				{Table: "stats", ShardKey: "t", HotWindow: config.HotWindow{Months: 2}},
				{Table: "stats_5min", ShardKey: "t", HotWindow: config.HotWindow{Months: 2}},
			},
			Snapshot: func() *metadata.Snapshot { return snap },
			Clock:    func() time.Time { return day("2025-03-15") },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	declareDatetime(r, tables[0].Name, "stats_5min_202501")
	cases := []struct {
		sql    string
		tables []string
	}{
		{"select id from stats where t >= '2025-02-10'", []string{"stats_202502", "stats_202503"}},
		{"select id from stats_5min where t >= '2025-02-10'", []string{"stats_5min_202502", "stats_5min_202503"}},
		{"select id from stats where t >= '2025-04-10'", []string{"stats_202503"}}, // no rows: the newest table, clamped false
		{"insert into stats (id, t) values (1, '2025-03-02')", []string{"stats_202503"}},
	}
	for _, c := range cases {
		p, err := r.Route(Input{Statement: r.Analyze(c.sql)})
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var got []string
		for _, tg := range p.Targets {
			got = append(got, tg.Tables...)
		}
		if !reflect.DeepEqual(got, c.tables) {
			t.Errorf("%s: tables %v, want %v", c.sql, got, c.tables)
		}
	}
}
