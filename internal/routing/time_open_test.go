package routing

import (
	"errors"
	"strings"
	"testing"

	"github.com/obroute/obroute/metadata"
)

// The newest table's span is open above: rows written past its max_time (before the next
// period's table exists) are read, not hidden; every other table keeps both bounds, and an
// INSERT still needs a covering table and says how to create it.
func TestNewestTableOpenAbove(t *testing.T) {
	cases := []struct {
		name   string
		tables []metadata.Table
		sql    string
		want   []wantTarget
	}{
		{name: "range past the newest table's max_time reads it, lower bound only",
			tables: monthlyTables("2025-01-01", "2025-03-01", "2025-01-01"),
			sql:    "select count(*) from orders where order_time >= '2025-04-01' and order_time < '2025-04-02'",
			want:   []wantTarget{{"hot", "select count(*) from orders_202503 where order_time >= '2025-04-01' and order_time < '2025-04-02' and orders_202503.order_time >= '2025-03-01 00:00:00'", nil}},
		},
		{name: "range across the newest table's end: older tables keep both bounds",
			tables: monthlyTables("2025-01-01", "2025-03-01", "2025-01-01"),
			sql:    "select id from orders where order_time >= '2025-02-27' and order_time < '2025-04-02'",
			want: []wantTarget{{"hot", "(select id from orders_202502 where order_time >= '2025-02-27' and order_time < '2025-04-02' and orders_202502.order_time >= '2025-02-01 00:00:00' and orders_202502.order_time < '2025-03-01 00:00:00') union all " +
				"(select id from orders_202503 where order_time >= '2025-02-27' and order_time < '2025-04-02' and orders_202503.order_time >= '2025-03-01 00:00:00')", nil}},
		},
		{name: "an older table ending later: no span is open, a range past every table reads nothing",
			tables: append(monthlyTables("2025-01-01", "2025-03-01", "2025-01-01"), metadata.Table{Name: "orders_2025q1", Min: day("2025-01-01"), Max: day("2025-04-30 23:59:59"), Hot: true}),
			sql:    "select count(*) from orders where order_time >= '2025-05-01'",
			want:   []wantTarget{{"hot", "select count(*) from orders_202503 where order_time >= '2025-05-01' and orders_202503.order_time >= '2025-03-01 00:00:00' and orders_202503.order_time < '2025-04-01 00:00:00'", nil}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, ordersTable(), c.tables, "2025-03-15 12:00:00")
			p, err := f.route(c.sql, nil, Input{})
			if err != nil {
				t.Fatal(err)
			}
			checkTargets(t, p, c.want)
		})
	}

	f := newFixture(t, ordersTable(), monthlyTables("2025-01-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00")
	_, err := f.route("insert into orders (id, order_time) values (1, '2025-04-01 00:00:00')", nil, Input{})
	if !errors.Is(err, ErrNoShardTable) || !strings.Contains(err.Error(), "obroute metadata prepare") {
		t.Errorf("INSERT past the newest table: %v; want ErrNoShardTable naming obroute metadata prepare", err)
	}
}
