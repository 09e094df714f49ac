package merge

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// weightOf is the weight column of expr, as the rewrite selects it.
func weightOf(expr string) string { return strings.Join(WeightSQL(), expr) }

// renderTyped reads all rows as "Type:value|…" lines.
func renderTyped(tb testing.TB, rows driver.Rows) []string {
	tb.Helper()
	dest := make([]driver.Value, len(rows.Columns()))
	var out []string
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		parts := make([]string, len(dest))
		for i, v := range dest {
			parts[i] = fmt.Sprintf("%T:%s", v, render(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
}

// TestMariaDBMergeMatchesOneServer runs each statement once on the whole
// table and once as two halves merged, and expects the same rows with the
// same Go types: the server is the oracle.
func TestMariaDBMergeMatchesOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MariaDB")
	}
	dbs := openServers(t, 2)
	db1, db2 := dbs[0], dbs[1]
	const groupCols = "grp, COUNT(*), SUM(amount), MIN(amount), MAX(created)"
	tests := []struct {
		name      string
		whole     string // one server; "%s" is the WHERE condition
		part      string // each half; "%s" is the WHERE condition
		spec      Spec
		binary    bool // bind ? arguments: the binary protocol
		partLimit string
	}{
		{"ORDER BY a _ci VARCHAR with OFFSET/LIMIT",
			"SELECT name, id, amount FROM t WHERE %s ORDER BY name DESC, id LIMIT 20 OFFSET 5",
			"SELECT name, id, amount, " + weightOf("name") + " FROM t WHERE %s ORDER BY name DESC, id LIMIT 25",
			Spec{Visible: 3, Weights: []int{3}, Collations: [][]byte{ciSignature}, OrderBy: []OrderKey{{Column: 0, Desc: true}, {Column: 1}}, Offset: 5, Limit: 20}, false, ""},
		{"ORDER BY DATETIME(3) and DECIMAL, binary protocol",
			"SELECT created, amount, id FROM t WHERE %s ORDER BY created, amount DESC LIMIT 50",
			"SELECT created, amount, id FROM t WHERE %s ORDER BY created, amount DESC LIMIT 50",
			Spec{OrderBy: []OrderKey{{Column: 0}, {Column: 1, Desc: true}}, Limit: 50}, true, ""},
		{"streaming GROUP BY with AVG",
			"SELECT " + groupCols + ", AVG(amount) FROM t WHERE %s GROUP BY grp ORDER BY grp",
			"SELECT " + groupCols + ", AVG(amount), SUM(amount), COUNT(amount), @@div_precision_increment FROM t WHERE %s GROUP BY grp ORDER BY grp",
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Limit: NoLimit, Aggregates: []Aggregate{
				{Func: AggCount, Column: 1}, {Func: AggSum, Column: 2}, {Func: AggMin, Column: 3}, {Func: AggMax, Column: 4},
				{Func: AggAvg, Column: 5, Sum: 6, Count: 7, Increment: 8, Arg: ArgColumn}}}, false, ""},
		{"streaming GROUP BY with AVG, binary protocol",
			"SELECT " + groupCols + ", AVG(amount) FROM t WHERE %s GROUP BY grp ORDER BY grp",
			"SELECT " + groupCols + ", AVG(amount), SUM(amount), COUNT(amount), @@div_precision_increment FROM t WHERE %s GROUP BY grp ORDER BY grp",
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Limit: NoLimit, Aggregates: []Aggregate{
				{Func: AggCount, Column: 1}, {Func: AggSum, Column: 2}, {Func: AggMin, Column: 3}, {Func: AggMax, Column: 4},
				{Func: AggAvg, Column: 5, Sum: 6, Count: 7, Increment: 8, Arg: ArgColumn}}}, true, ""},
		{"hash GROUP BY ordered by an aggregate, HAVING, LIMIT",
			"SELECT grp %% 37 AS g, SUM(amount) AS s FROM t WHERE %s GROUP BY g HAVING SUM(amount) > 90000 ORDER BY s DESC LIMIT 7",
			"SELECT grp %% 37 AS g, SUM(amount) AS s FROM t WHERE %s GROUP BY g ORDER BY s DESC",
			Spec{OrderBy: []OrderKey{{Column: 1, Desc: true}}, GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggSum, Column: 1}},
				Having: Cmp(OpGt, Col(1), Lit(90000)), Limit: 7}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond := func(op, v string) (string, []any) {
				if tt.binary {
					return "id " + op + " ?", []any{v}
				}
				return "id " + op + " " + v, nil
			}
			wq, wa := cond(">", "0")
			var want []string
			rawQueries(t, []*sql.DB{db1}, []string{fmt.Sprintf(tt.whole, wq)}, [][]any{wa}, func(in []driver.Rows) {
				want = renderTyped(t, in[0])
				in[0].Close()
			})
			q1, a1 := cond("<=", "100000")
			q2, a2 := cond(">", "100000")
			var got []string
			rawQueries(t, []*sql.DB{db1, db2}, []string{fmt.Sprintf(tt.part, q1), fmt.Sprintf(tt.part, q2)}, [][]any{a1, a2}, func(in []driver.Rows) {
				m, err := New(tt.spec, in)
				if err != nil {
					t.Fatal(err)
				}
				got = renderTyped(t, m)
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			})
			if len(want) == 0 {
				t.Fatal("the one-server query returned no rows; the test data is wrong")
			}
			if !slices.Equal(got, want) {
				for i := range max(len(got), len(want)) {
					g, w := "", ""
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						w = want[i]
					}
					if g != w {
						t.Errorf("row %d:\n merged %s\n server %s", i, g, w)
					}
				}
			}
			t.Logf("%d rows match, first: %s", len(got), want[0])
		})
	}
}
