package routing

import (
	"reflect"
	"strings"
	"testing"
)

func TestSelectItemTexts(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT COUNT(*), SUM( amount ) FROM orders", []string{"COUNT(*)", "SUM( amount )"}},
		{"/*+ OBROUTE(query_level=L2) */ SELECT DISTINCT SQL_NO_CACHE user_id, IF(a, 1, 2) x FROM t", []string{"user_id", "IF(a, 1, 2) x"}},
		{"select (select max(id) from u where u.a = t.a), 'a,b' from t where id in (select 1 from dual)", []string{"(select max(id) from u where u.a = t.a)", "'a,b'"}},
		{"SELECT AVG(amount)\n\tFROM orders ORDER BY 1", []string{"AVG(amount)"}},
		{"SELECT 1 + 1", []string{"1 + 1"}},
		{"SELECT a /* c */, b FROM t", []string{"", "b"}},
		{"SELECT MIN(x) FROM t UNION SELECT 1", []string{"MIN(x)"}},
		{"UPDATE t SET a = 1", nil},
	}
	for _, c := range cases {
		if got := selectItemTexts(c.sql); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s\n got %q\nwant %q", c.sql, got, c.want)
		}
	}
}

// The sub-queries of a split keep MySQL's column names: the text of each item as written
// (found by internal/difftest: "count(`status`)" came back for COUNT(status), "sum(amount)" for
// AVG(amount)).
func TestSplitKeepsColumnNames(t *testing.T) {
	cases := []struct{ name, sql, leg string }{
		{"aggregates", "SELECT COUNT(*), COUNT(status), AVG(amount), MAX(order_time) FROM orders" + strings.ToUpper(splitWhere),
			"select COUNT(*), COUNT(`status`) as `COUNT(status)`, AVG(amount), MAX(order_time), sum(amount) as _obroute_5, count(amount) as _obroute_6, @@div_precision_increment as _obroute_7 from orders_202412 where"},
		{"group by with hidden order", "SELECT user_id, SUM(amount) FROM orders" + splitWhere + " GROUP BY user_id ORDER BY 2 DESC",
			"select user_id, SUM(amount), " + weightItem("user_id", 3) + ", (user_id) + 0 as _obroute_4 from orders_202412 where"},
		{"written as printed, aliased, columns: unchanged", "select o.id, amount a, sum(amount) as s, count(*) from orders o" + splitWhere + " group by o.id, amount",
			"select o.id, amount as a, sum(amount) as s, count(*), " + weightItem("o.id", 5) + ", " + weightItem("amount", 6) + ", (o.id) + 0 as _obroute_7, (amount) + 0 as _obroute_8 from orders_202412 as o where"},
		{"avg written as printed is named as written", "select avg(amount), user_id from orders" + splitWhere + " group by user_id",
			"select avg(amount), user_id, sum(amount) as _obroute_3, count(amount) as _obroute_4, @@div_precision_increment as _obroute_5, " + weightItem("user_id", 6) + ", (user_id) + 0 as _obroute_7 from orders_202412 where"},
		{"one table", "SELECT COUNT(*) FROM orders WHERE order_time >= '2025-03-02'",
			"select COUNT(*) from orders_202503 where"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := splitPlan(t, c.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimPrefix(p.Targets[0].SQL, coldPrefix)
			if !strings.HasPrefix(got, c.leg+" ") {
				t.Errorf("first sub-query\n got %s\nwant prefix %s", got, c.leg)
			}
		})
	}
}
