package routing

import "testing"

// TestGroupedDerivedTables: a derived table or WITH that groups the time-sharded table, under an
// outer query that selects, filters, orders and limits its columns, is the one grouped query
// with the outer condition as HAVING; across tables the merge plans that query.
func TestGroupedDerivedTables(t *testing.T) {
	const grouped = "(select user_id, count(*) as n from orders where order_time >= '2025-02-20' group by user_id) t"
	cases := []routeCase{
		{
			name: "one table: the statement itself, the clamp inside", class: ClassHotOnly,
			sql:  "select * from (select user_id, count(*) as n from orders where order_time >= '2025-03-02' group by user_id) t where n > 1",
			want: []wantTarget{{"hot", "select * from (select user_id, count(*) as n from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00' group by user_id) as t where n > 1", nil}},
		},
		{
			name: "across tables: the grouped query, the outer condition applied after merging", class: ClassHotOnly, merge: true,
			sql:  "select n from " + grouped + " where n > 1 order by n desc limit 2",
			want: []wantTarget{{"hot", "(select count(*) as n, user_id as _obroute_2, " + weightItem("user_id", 3) + ", (user_id) + 0 as _obroute_4 from orders_202502 where order_time >= '2025-02-20' and orders_202502.order_time >= '2025-02-01 00:00:00' and orders_202502.order_time < '2025-03-01 00:00:00' group by user_id) union all (select count(*) as n, user_id as _obroute_2, " + weightItem("user_id", 3) + ", (user_id) + 0 as _obroute_4 from orders_202503 where order_time >= '2025-02-20' and orders_202503.order_time >= '2025-03-01 00:00:00' group by user_id)", nil}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRoute(t, c.sql, nil, c.class, c.merge, c.want) })
	}
	const fix = "select, filter (WHERE on its columns), order and limit its columns only"
	refusals := []refusalCase{
		{"outer aggregates", "select count(*), sum(n) from " + grouped, ErrNotMergeable, "a SUM of an inner COUNT(*) is COUNT(*)"},
		{"outer grouping", "select n from " + grouped + " group by n", ErrNotMergeable, fix},
		{"a renamed column", "select n as cnt from " + grouped, ErrNotMergeable, fix},
		{"a qualified column", "select t.n from " + grouped, ErrNotMergeable, fix},
		{"a condition on a column not selected", "select user_id from " + grouped + " where n > 1", ErrNotMergeable, fix},
		{"an expression of the columns", "select n * 2 as m from " + grouped, ErrNotMergeable, fix},
		{"a join", "select n from " + grouped + " join users u on u.id = t.user_id", ErrNotMergeable, fix},
		{"an aggregate without alias", "select * from (select user_id, count(*) from orders where order_time >= '2025-02-20' group by user_id) t", ErrNotMergeable, "AS name"},
		{"an alias that is a group column", "select * from (select status, count(*) as user_id from orders where order_time >= '2025-02-20' group by status, user_id) t where user_id > 1", ErrNotMergeable, "another alias"},
		{"limit inside", "select * from (select user_id, count(*) as n from orders where order_time >= '2025-02-20' group by user_id limit 3) t", ErrNotMergeable, fix},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) { checkRefusal(t, c.sql, c.err, c.fix) })
	}
}
