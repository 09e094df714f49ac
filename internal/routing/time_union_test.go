package routing

import (
	"testing"
)

// TestUnionOverTheShardedTable routes UNIONs whose every SELECT reads the time-sharded table:
// one table gets the UNION itself, clamped in each SELECT; across tables each sub-query runs the
// UNION as a derived table and the merge combines them (DISTINCT for UNION).
func TestUnionOverTheShardedTable(t *testing.T) {
	cases := []routeCase{
		{
			name: "one table: the union itself, each select clamped", class: ClassHotOnly,
			sql:  "select id from orders where order_time >= '2025-03-02' union select id from orders where order_time >= ?",
			want: []wantTarget{{"hot", "select id from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00' union select id from orders_202503 where order_time >= ? and orders_202503.order_time >= '2025-03-01 00:00:00'", []any{"2025-03-05"}}},
		},
		{
			name: "across tables: a derived table per sub-query, distinct for union", class: ClassSplit, merge: true,
			sql: "select user_id from orders where order_time >= '2024-12-20' and order_time < '2025-01-10' union select user_id from orders where order_time >= ? and order_time < '2025-01-10'",
			want: []wantTarget{
				{"cold", "/* cold_query */ select distinct user_id, " + weightItem("user_id", 2) + " from (select user_id from orders_202412 where order_time >= '2024-12-20' and order_time < '2025-01-10' and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00' union select user_id from orders_202412 where order_time >= ? and order_time < '2025-01-10' and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00') as _obroute_union", []any{"2025-03-05"}},
				{"hot", "select distinct user_id, " + weightItem("user_id", 2) + " from (select user_id from orders_202501 where order_time >= '2024-12-20' and order_time < '2025-01-10' and orders_202501.order_time >= '2025-01-01 00:00:00' and orders_202501.order_time < '2025-02-01 00:00:00' union select user_id from orders_202501 where order_time >= ? and order_time < '2025-01-10' and orders_202501.order_time >= '2025-01-01 00:00:00' and orders_202501.order_time < '2025-02-01 00:00:00') as _obroute_union", []any{"2025-03-05"}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRoute(t, c.sql, args("2025-03-05"), c.class, c.merge, c.want) })
	}
}

// TestUnionRefusals: a UNION whose per-table push-down would not be the union over all rows is
// refused, with the rewrite that works.
func TestUnionRefusals(t *testing.T) {
	const from = " from orders where order_time >= '2024-12-20'"
	cases := []refusalCase{
		{"mixed union and union all", "select id" + from + " union select id" + from + " union all select id" + from, ErrNotMergeable, "use one of them throughout"},
		{"intersect", "select id" + from + " intersect select id" + from, ErrNotMergeable, "combine the rows in the application"},
		{"a select on another table", "select id" + from + " union all select id from users", ErrNotMergeable, "each SELECT reads orders once"},
		{"different aliases", "select o.id from orders o where o.order_time >= '2024-12-20' union select id" + from, ErrNotMergeable, "same alias"},
		{"grouping in a select", "select user_id" + from + " group by user_id union select user_id" + from, ErrNotMergeable, "a SELECT of the UNION"},
		{"limit in a select", "(select id" + from + " limit 3) union (select id" + from + ")", ErrNotMergeable, "LIMIT"},
		{"an expression without alias first", "select amount * 2" + from + " union select amount" + from, ErrNotMergeable, "AS name"},
		{"two columns of one name", "select id, id" + from + " union select id, user_id" + from, ErrNotMergeable, "different aliases"},
		{"a subquery on the table too", "select id" + from + " union select id" + from + " and id in (select id" + from + ")", ErrNotMergeable, "no subquery on it"},
		{"range in one select only", "select id" + from + " union select id from orders", ErrNoTimeRange, "put the condition on order_time there"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRefusal(t, c.sql, c.err, c.fix) })
	}
}
