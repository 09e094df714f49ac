package routing

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// TestDerivedTables routes SELECTs whose time-sharded table is read in a derived table or a
// common table expression: each sub-query runs the whole statement with its physical table and
// its clamp inside, and the outer query merges as over the table itself.
func TestDerivedTables(t *testing.T) {
	cases := []routeCase{
		{
			name: "one table: the statement with the clamp inside the derived table", class: ClassHotOnly,
			sql:  "select status, sum(amount) from (select status, amount from orders where order_time >= '2025-03-02') as t group by status",
			want: []wantTarget{{"hot", "select `status`, sum(amount) from (select `status`, amount from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00') as t group by `status`", nil}},
		},
		{
			name: "a common table expression is sent as the derived table it is, per table", class: ClassSplit, merge: true,
			sql: "with t as (select user_id, amount from orders o where o.order_time >= '2024-12-20' and o.order_time < '2025-01-10') select count(*), sum(amount) from t",
			want: []wantTarget{
				{"cold", "/* cold_query */ select count(*), sum(amount) from (select user_id, amount from orders_202412 as o where o.order_time >= '2024-12-20' and o.order_time < '2025-01-10' and o.order_time >= '2024-12-01 00:00:00' and o.order_time < '2025-01-01 00:00:00') as t", nil},
				{"hot", "select count(*), sum(amount) from (select user_id, amount from orders_202501 as o where o.order_time >= '2024-12-20' and o.order_time < '2025-01-10' and o.order_time >= '2025-01-01 00:00:00' and o.order_time < '2025-02-01 00:00:00') as t", nil},
			},
		},
		{
			name: "joined with another table, the range read inside", class: ClassHotOnly, merge: true,
			sql:  "select u.name, t.id from users u join (select id, user_id from orders where order_time >= '2025-02-20') t on t.user_id = u.id order by t.id limit 2",
			want: []wantTarget{{"hot", "(select u.`name`, t.id, " + weightItem("t.id", 3) + ", (t.id) + 0 as _obroute_4 from users as u join (select id, user_id from orders_202502 where order_time >= '2025-02-20' and orders_202502.order_time >= '2025-02-01 00:00:00' and orders_202502.order_time < '2025-03-01 00:00:00') as t on t.user_id = u.id order by t.id asc limit 2) union all (select u.`name`, t.id, " + weightItem("t.id", 3) + ", (t.id) + 0 as _obroute_4 from users as u join (select id, user_id from orders_202503 where order_time >= '2025-02-20' and orders_202503.order_time >= '2025-03-01 00:00:00') as t on t.user_id = u.id order by t.id asc limit 2) order by 4 asc, 2 asc limit 2", nil}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRoute(t, c.sql, nil, c.class, c.merge, c.want) })
	}
	p, err := standard(t).route(cases[1].sql, nil, Input{Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "range [2024-12-20 00:00:00, 2025-01-10 00:00:00) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into 1 hot and 1 cold sub-queries; read inside a derived table, WITH or UNION, which each sub-query runs whole on its table"
	if len(p.Prompts) != 1 || p.Prompts[0] != want {
		t.Errorf("prompts %q, want [%q]", p.Prompts, want)
	}
}

// TestDerivedTableRefusals: what a per-table push-down of the whole statement would answer
// wrongly is refused, with the rewrite that works.
func TestDerivedTableRefusals(t *testing.T) {
	const rng = "order_time >= '2024-12-20'"
	cases := []refusalCase{
		{"grouping inside", "select count(*) from (select user_id, count(*) n from orders where " + rng + " group by user_id) t", ErrNotMergeable, "COUNT(DISTINCT k), plus one when k is NULL"},
		{"grouping inside and outside", "select n, count(*) from (select user_id, count(*) n from orders where " + rng + " group by user_id) t group by n", ErrNotMergeable, "aggregate the table itself"},
		{"limit inside", "select * from (select id from orders where " + rng + " limit 5) t", ErrNotMergeable, "LIMIT"},
		{"distinct inside", "with t as (select distinct user_id from orders where " + rng + ") select count(*) from t", ErrNotMergeable, "DISTINCT"},
		{"window inside", "select * from (select id, row_number() over (order by id) rn from orders where " + rng + ") t", ErrNotMergeable, "window function"},
		{"expression without alias", "select * from (select amount * 2 from orders where " + rng + ") t", ErrNotMergeable, "AS name"},
		{"another value named as the shard key", "select max(order_time) from (select id as order_time from orders where " + rng + ") t", ErrNotMergeable, "another alias"},
		{"range only outside", "select * from (select id, order_time from orders) t where order_time >= '2025-01-01'", ErrNoTimeRange, "put the condition on order_time there"},
		{"common table expression read twice", "with t as (select id from orders where " + rng + ") select * from t a join t b on a.id = b.id", ErrNotMergeable, "read it once"},
		{"common table expression read in a subquery", "with t as (select id from orders where " + rng + ") select * from users where id in (select id from t)", ErrNotMergeable, "read it in the FROM"},
		{"recursive", "with recursive t as (select id from orders where " + rng + ") select * from t", ErrNotMergeable, "not recursive"},
		{"column list", "with t (a) as (select id from orders where " + rng + ") select * from t", ErrNotMergeable, "AS aliases"},
		{"nested derived tables", "select * from (select * from (select id from orders where " + rng + ") a) b", ErrNotMergeable, "one derived table or WITH"},
		{"derived table named as the sharded table", "select orders.id from (select id from orders where " + rng + ") orders", ErrNotMergeable, "another alias"},
		{"derived table on the optional side", "select * from users u left join (select id, user_id from orders where " + rng + ") t on t.user_id = u.id", ErrNotMergeable, "preserved side"},
		{"the same table in a subquery too", "select * from (select id, amount from orders where " + rng + ") t where amount > (select avg(amount) from orders where " + rng + ")", ErrTimeShardedJoin, "query each part on its own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRefusal(t, c.sql, c.err, c.fix) })
	}
}

// checkRoute routes sql with a over the standard fixture and checks its class, whether it
// merges, and its targets.
func checkRoute(t *testing.T, sql string, a []driver.NamedValue, class Class, merge bool, want []wantTarget) {
	t.Helper()
	p, err := standard(t).route(sql, a, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Class != class || (p.Merge != nil) != merge {
		t.Errorf("class %s merge %v, want %s %v", p.Class, p.Merge != nil, class, merge)
	}
	checkTargets(t, p, want)
}

// checkRefusal checks that sql is refused with want, its message saying fix.
func checkRefusal(t *testing.T, sql string, want error, fix string) {
	t.Helper()
	_, err := standard(t).route(sql, nil, Input{})
	if !errors.Is(err, want) || !strings.Contains(err.Error(), fix) {
		t.Errorf("error %v, want %v saying %q", err, want, fix)
	}
}

// routeCase is a statement routed over the standard fixture and what it must give.
type routeCase struct {
	name  string
	sql   string
	class Class
	want  []wantTarget
	merge bool
}

// refusalCase is a statement refused with err, its message saying fix.
type refusalCase struct {
	name, sql string
	err       error
	fix       string
}
