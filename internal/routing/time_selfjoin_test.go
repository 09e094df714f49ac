package routing

import "testing"

// TestSubqueryOnTheShardedTable: a SELECT reading the time-sharded table several times is sent
// whole to the one table every use's range lies in, and refused when the ranges need more.
func TestSubqueryOnTheShardedTable(t *testing.T) {
	const feb = "order_time >= '2025-02-03' and order_time < '2025-02-10'"
	cases := []routeCase{
		{
			name: "a scalar subquery, both ranges in one table", class: ClassHotOnly,
			sql:  "select id, amount from orders where " + feb + " and amount > (select avg(amount) from orders where order_time >= '2025-02-01' and order_time <= '2025-02-28 23:59:59')",
			want: []wantTarget{{"hot", "select id, amount from orders_202502 where order_time >= '2025-02-03' and order_time < '2025-02-10' and amount > (select avg(amount) from orders_202502 where order_time >= '2025-02-01' and order_time <= '2025-02-28 23:59:59')", nil}},
		},
		{
			name: "IN a subquery, in the open newest table", class: ClassHotOnly,
			sql:  "select count(*) from orders o where o.order_time >= '2025-03-02' and o.user_id in (select user_id from orders where order_time >= ? and status = 'paid')",
			want: []wantTarget{{"hot", "select count(*) from orders_202503 as o where o.order_time >= '2025-03-02' and o.user_id in (select user_id from orders_202503 where order_time >= ? and `status` = 'paid')", []any{"2025-03-05"}}},
		},
		{
			name: "with rollup, kept", class: ClassHotOnly,
			sql:  "select status, count(*) from orders where " + feb + " and user_id in (select user_id from orders where " + feb + ") group by status with rollup",
			want: []wantTarget{{"hot", "select `status`, count(*) from orders_202502 where order_time >= '2025-02-03' and order_time < '2025-02-10' and user_id in (select user_id from orders_202502 where order_time >= '2025-02-03' and order_time < '2025-02-10') group by `status` with rollup", nil}},
		},
		{
			name: "a self-join, each side's range read from its own conditions", class: ClassHotOnly,
			sql:  "select a.id, b.id from orders a join orders b on b.user_id = a.user_id and b.order_time >= '2025-02-20' and b.order_time < '2025-02-21' where a.order_time >= '2025-02-03' and a.order_time < '2025-02-10'",
			want: []wantTarget{{"hot", "select a.id, b.id from orders_202502 as a join orders_202502 as b on b.user_id = a.user_id and b.order_time >= '2025-02-20' and b.order_time < '2025-02-21' where a.order_time >= '2025-02-03' and a.order_time < '2025-02-10'", nil}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRoute(t, c.sql, args("2025-03-05"), c.class, c.merge, c.want) })
	}
	refusals := []refusalCase{
		{"ranges in two tables", "select id from orders where " + feb + " and amount > (select avg(amount) from orders where order_time >= '2025-01-20')", ErrTimeShardedJoin, "the range of every use lies in one table"},
		{"a subquery without range", "select id from orders where " + feb + " and amount > (select avg(amount) from orders)", ErrTimeShardedJoin, "run the subquery first and pass its value as a ? argument"},
		{"a correlated range", "select id from orders o where o." + feb + " and amount > (select avg(amount) from orders p where p.order_time = o.order_time)", ErrTimeShardedJoin, "query each part on its own"},
		{"a range past the table's last second", "select id from orders where order_time >= '2025-02-03' and order_time <= '2025-03-01' and amount > (select avg(amount) from orders where " + feb + ")", ErrTimeShardedJoin, "lies in one table"},
		{"a use on the optional side", "select a.id from orders a left join orders b on b.id = a.id and b." + feb + " where a." + feb, ErrTimeShardedJoin, "query each part on its own"},
		{"a write", "delete from orders where " + feb + " and id in (select id from orders where " + feb + ")", ErrTimeShardedJoin, "query each part on its own"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) { checkRefusal(t, c.sql, c.err, c.fix) })
	}
}
