package difftest

import (
	"strings"
	"testing"
	"time"
)

var (
	from     = time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	to       = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	boundary = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

func TestGenerateOrders(t *testing.T) {
	a, b := GenerateOrders(7, from, to, 2000), GenerateOrders(7, from, to, 2000)
	if len(a) != 2000 || rowKey(orderRow(a[1999])) != rowKey(orderRow(b[1999])) {
		t.Fatal("the same seed must give the same data")
	}
	var nulls, ties int
	for i, o := range a {
		if o.OrderTime.Before(from) || !o.OrderTime.Before(to) {
			t.Fatalf("order %d at %s outside the data span", o.ID, o.OrderTime)
		}
		if o.Amount == nil || o.UserID == nil || o.Status == nil {
			nulls++
		}
		if i > 0 && o.OrderTime.Equal(a[i-1].OrderTime) {
			ties++
		}
	}
	if nulls < 100 || ties < 100 {
		t.Errorf("%d rows with NULLs and %d equal times, want plenty of both", nulls, ties)
	}
	tables := MonthlyTables("orders", from, to.AddDate(0, -1, 0), boundary)
	if len(tables) != 9 || tables[6].Name != "orders_202501" || !tables[6].Hot || tables[5].Hot {
		t.Fatalf("tables %+v", tables)
	}
	parts := Split(a, tables)
	total := 0
	for name, rows := range parts {
		if name == "" {
			t.Errorf("%d orders fit no table", len(rows))
		}
		total += len(rows)
	}
	if total != len(a) {
		t.Errorf("split holds %d rows, want %d", total, len(a))
	}
	stmts := InsertSQL("orders_ref", a[:3], 2)
	if len(stmts) != 2 || !strings.HasPrefix(stmts[0], "INSERT INTO orders_ref (id, user_id, amount, status, order_time) VALUES (1, ") {
		t.Errorf("insert statements %q", stmts)
	}
}

func orderRow(o Order) []any {
	r := []any{o.ID, nil, nil, nil, o.OrderTime}
	if o.UserID != nil {
		r[1] = *o.UserID
	}
	if o.Amount != nil {
		r[2] = *o.Amount
	}
	if o.Status != nil {
		r[3] = *o.Status
	}
	return r
}

func TestGenerator(t *testing.T) {
	cfg := QueryConfig{Table: "orders", From: from, To: to, Boundary: boundary}
	g1, g2 := NewGenerator(42, cfg), NewGenerator(42, cfg)
	kinds := map[string]int{}
	features := map[string]int{}
	for range 1000 {
		q1, q2 := g1.Next(), g2.Next()
		if q1.SQL != q2.SQL || len(q1.Args) != len(q2.Args) {
			t.Fatalf("not deterministic:\n%s\n%s", q1.SQL, q2.SQL)
		}
		if strings.Count(q1.SQL, "?") != len(q1.Args) {
			t.Fatalf("%d args for %s", len(q1.Args), q1.SQL)
		}
		if !strings.Contains(q1.SQL, " FROM orders WHERE ") && !strings.Contains(q1.SQL, " FROM orders o WHERE ") ||
			!strings.Contains(q1.ForTable("orders", "orders_ref"), " FROM orders_ref ") {
			t.Fatalf("table not replaceable in %s", q1.SQL)
		}
		kinds[q1.Kind]++
		for _, f := range []string{" IN (", " BETWEEN ", ") OR (", " NOT (", "?", "TIMESTAMP '", "DATE '", " ORDER BY ", " LIMIT ", " OFFSET ", " GROUP BY ", " HAVING ", "DISTINCT", "AVG(", "o.order_time", "LIMIT ?"} {
			if strings.Contains(q1.SQL, f) {
				features[f]++
			}
		}
	}
	for _, k := range []string{"rows", "aggregate", "group", "distinct"} {
		if kinds[k] < 50 {
			t.Errorf("only %d %s queries in 1000", kinds[k], k)
		}
	}
	for _, f := range []string{" IN (", " BETWEEN ", ") OR (", " NOT (", "?", "TIMESTAMP '", "DATE '", " ORDER BY ", " LIMIT ", " OFFSET ", " GROUP BY ", " HAVING ", "DISTINCT", "AVG(", "o.order_time", "LIMIT ?"} {
		if features[f] < 20 {
			t.Errorf("feature %q appears in only %d of 1000 queries", f, features[f])
		}
	}
}

func TestCompare(t *testing.T) {
	a := [][]any{{"1", nil}, {"2", "x"}, {"2", "x"}}
	cases := []struct {
		name    string
		got     [][]any
		ordered bool
		err     string
	}{
		{"same order", [][]any{{"1", nil}, {"2", "x"}, {"2", "x"}}, true, ""},
		{"multiset ignores order", [][]any{{"2", "x"}, {"1", nil}, {"2", "x"}}, false, ""},
		{"order matters when ordered", [][]any{{"2", "x"}, {"1", nil}, {"2", "x"}}, true, "row 1 differs"},
		{"duplicates counted", [][]any{{"1", nil}, {"2", "x"}}, false, "1 missing"},
		{"NULL is not empty text", [][]any{{"1", ""}, {"2", "x"}, {"2", "x"}}, false, "1 extra"},
		{"extra row in order", [][]any{{"1", nil}, {"2", "x"}, {"2", "x"}, {"3", nil}}, true, "row 4 extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Compare(a, c.got, c.ordered)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("Compare: %v, want %q", err, c.err)
			}
		})
	}
}
