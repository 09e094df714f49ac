package merge

import (
	"database/sql/driver"
	"errors"
	"slices"
	"testing"
)

// TestComputed checks expressions over merged aggregates against the values MariaDB 10.11 gives
// for the same totals (SELECT CAST(13.75 AS DECIMAL(10,2))/3*3 and the like): a quotient keeps
// whole 9-digit words and drops the rest, the result is rounded half away from zero to its
// type's scale, and an integer quotient under div_precision_increment 0 is cut.
func TestComputed(t *testing.T) {
	// The computed columns first (their sub-query values are replaced), then the aggregates:
	// COUNT(*), SUM(x), MIN(x), MAX(x), AVG(x) with its hidden SUM, COUNT and increment.
	cols := []string{"q", "q3", "r", "c2", "span", "neg", "ri", "cnt", "total", "lo", "hi", "avg", "avg_sum", "avg_cnt", "incr"}
	types := []string{"DECIMAL(38,6)", "DECIMAL(38,6)", "DECIMAL(16,1)", "BIGINT", "DECIMAL(13,2)", "DECIMAL(38,6)", "BIGINT",
		"BIGINT", "DECIMAL(34,2)", "DECIMAL(12,2)", "DECIMAL(12,2)", "DECIMAL(16,6)", "DECIMAL(34,2)", "BIGINT", "BIGINT"}
	aggs := []Aggregate{
		{Func: AggCount, Column: 7},
		{Func: AggSum, Column: 8},
		{Func: AggMin, Column: 9},
		{Func: AggMax, Column: 10},
		{Func: AggAvg, Column: 11, Sum: 12, Count: 13, Increment: 14, Arg: ArgColumn},
	}
	computed := []Computed{
		{Column: 0, Expr: Arith('/', Agg(8), Agg(7)), Increment: 14},                       // SUM(x)/COUNT(*)
		{Column: 1, Expr: Arith('*', Arith('/', Agg(8), Agg(7)), Num("3")), Increment: 14}, // SUM(x)/COUNT(*)*3
		{Column: 2, Expr: Round(Agg(11), 1)},                                               // ROUND(AVG(x), 1)
		{Column: 3, Expr: Arith('*', Agg(7), Num("2"))},                                    // COUNT(*) * 2
		{Column: 4, Expr: Arith('-', Agg(10), Agg(9))},                                     // MAX(x) - MIN(x)
		{Column: 5, Expr: Arith('/', Neg(Arith('+', Agg(8), Num("1"))), Agg(7)), Increment: 14},
		{Column: 6, Expr: Round(Agg(7), -1)}, // ROUND(COUNT(*), -1)
	}
	junk := []any{"0", "0", "0", "0", "0", "0", "0"}
	row := func(incr string, vals ...any) []driver.Value {
		return r(append(append(slices.Clone(junk), vals...), incr)...)
	}
	spec := Spec{Visible: 7, Aggregates: aggs, Computed: computed, Limit: NoLimit}
	tests := []struct {
		name     string
		in0, in1 []driver.Value
		want     string
	}{
		{"div_precision_increment 4",
			row("4", "2", "12.50", "1.00", "9.00", "0", "10.00", "2"), row("4", "1", "1.25", "0.50", "20.00", "0", "5.00", "1"),
			"4.583333|13.750000|5.0|6|19.50|-4.916667|0"},
		{"div_precision_increment 0: a quotient of DECIMALs keeps a whole word",
			row("0", "1", "5.00", "1.00", "5.00", "0", "5.00", "1"), row("0", "1", "2.55", "2.55", "2.55", "0", "2.55", "1"),
			"3.775000|11.325000|3.8|4|4.00|-4.275000|0"},
		{"NULL operands and 15 rows",
			row("4", "10", "NULL", "NULL", "NULL", "NULL", "NULL", "0"), row("4", "5", "NULL", "NULL", "NULL", "NULL", "NULL", "0"),
			"NULL|NULL|NULL|30|NULL|NULL|20"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergeAll(t, spec, newFake(cols, types, tc.in0), newFake(cols, types, tc.in1))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestComputedQuotientCut: SUM(x)/COUNT(*) of integers under div_precision_increment 0 keeps
// no fraction digit and is cut, not rounded (7/2 is 3 on the server).
func TestComputedQuotientCut(t *testing.T) {
	cols := []string{"q", "cnt", "total", "incr"}
	types := []string{"DECIMAL(33,0)", "BIGINT", "DECIMAL(32,0)", "BIGINT"}
	spec := Spec{Visible: 1, Limit: NoLimit,
		Aggregates: []Aggregate{{Func: AggCount, Column: 1}, {Func: AggSum, Column: 2}},
		Computed:   []Computed{{Column: 0, Expr: Arith('/', Agg(2), Agg(1)), Increment: 3}}}
	got, err := mergeAll(t, spec, newFake(cols, types, r("9", "1", "3", "0")), newFake(cols, types, r("9", "1", "4", "0")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestComputedRefused: an expression over a floating-point or text aggregate, or over a SUM of a
// quotient, is refused with ErrNotExact; sub-queries that ran with different
// div_precision_increment are too.
func TestComputedRefused(t *testing.T) {
	cols := []string{"e", "s", "incr"}
	tests := []struct {
		name  string
		types []string
		agg   Aggregate
		rows  [2][]driver.Value
	}{
		{"DOUBLE", []string{"DOUBLE", "DOUBLE", "BIGINT"}, Aggregate{Func: AggSum, Column: 1}, [2][]driver.Value{r("0", "1.5", "4"), r("0", "2.5", "4")}},
		{"text", []string{"DECIMAL(10,2)", "VARCHAR", "BIGINT"}, Aggregate{Func: AggMax, Column: 1}, [2][]driver.Value{r("0", "a", "4"), r("0", "b", "4")}},
		{"sum of a quotient", []string{"DECIMAL(38,6)", "DECIMAL(38,6)", "BIGINT"}, Aggregate{Func: AggSum, Column: 1, Exact: 2}, [2][]driver.Value{r("0", "1.5", "4"), r("0", "2.5", "4")}},
		{"increments differ", []string{"DECIMAL(38,6)", "DECIMAL(34,2)", "BIGINT"}, Aggregate{Func: AggSum, Column: 1}, [2][]driver.Value{r("0", "1.50", "4"), r("0", "2.50", "2")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := Spec{Visible: 1, Limit: NoLimit, Aggregates: []Aggregate{tc.agg},
				Computed: []Computed{{Column: 0, Expr: Arith('/', Agg(1), Num("2")), Increment: 2}}}
			_, err := mergeAll(t, spec, newFake(cols, tc.types, tc.rows[0]), newFake(cols, tc.types, tc.rows[1]))
			if !errors.Is(err, ErrNotExact) {
				t.Errorf("err = %v, want ErrNotExact", err)
			}
		})
	}
}

// TestLeadingHidden: with Spec.Leading the hidden columns come first (a SELECT * whose width only
// the rows tell) and are dropped; the merge orders by them.
func TestLeadingHidden(t *testing.T) {
	cols := []string{"k", "id", "note"}
	types := []string{"BIGINT", "BIGINT", "BIGINT"}
	spec := Spec{Leading: 1, OrderBy: []OrderKey{{Column: 0, Desc: true}}, Limit: NoLimit}
	got, err := mergeAll(t, spec, newFake(cols, types, r("9", "1", "10"), r("3", "2", "20")), newFake(cols, types, r("5", "3", "30")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1|10", "3|30", "2|20"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDistinctAggregates: each value of the argument is counted and added once per group, equal
// values from several inputs included, NULL never; with EmptyGroup, inputs without rows give the
// aggregates over no rows.
func TestDistinctAggregates(t *testing.T) {
	// COUNT(DISTINCT x), SUM(DISTINCT x), AVG(DISTINCT x) (with its hidden SUM, COUNT and
	// increment), COUNT(*), then the argument x.
	cols := []string{"cd", "sd", "ad", "cnt", "avg_sum", "avg_cnt", "incr", "x"}
	types := []string{"BIGINT", "DECIMAL(34,2)", "DECIMAL(16,6)", "BIGINT", "DECIMAL(34,2)", "BIGINT", "BIGINT", "DECIMAL(12,2)"}
	spec := Spec{Visible: 4, Limit: NoLimit, Aggregates: []Aggregate{
		{Func: AggCount, Column: 0, Distinct: []int{7}},
		{Func: AggSum, Column: 1, Distinct: []int{7}},
		{Func: AggAvg, Column: 2, Sum: 4, Count: 5, Increment: 6, Arg: ArgColumn, Distinct: []int{7}},
		{Func: AggCount, Column: 3},
	}}
	row := func(n, x string) []driver.Value { return r("1", x, x, n, x, "1", "4", x) }
	got, err := mergeAll(t, spec,
		newFake(cols, types, row("2", "1.50"), row("1", "2.00"), r("0", "NULL", "NULL", "3", "NULL", "0", "4", "NULL")),
		newFake(cols, types, row("4", "1.5"), row("1", "3.25")))
	if err != nil {
		t.Fatal(err)
	}
	// Distinct values 1.50, 2.00, 3.25: 3, 6.75, 2.25; eleven rows.
	if want := []string{"3|6.75|2.250000|11"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	spec.EmptyGroup = true
	got, err = mergeAll(t, spec, newFake(cols, types), newFake(cols, types))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0|NULL|NULL|0"}; !slices.Equal(got, want) {
		t.Errorf("no rows: got %q, want %q", got, want)
	}
}

// TestRollup: after the last group of each prefix of the keys comes its subtotal, the keys after
// the prefix NULL, and the total last, as MariaDB returns GROUP BY g, h WITH ROLLUP (its answer
// over the same rows, in one table: NULL a 1 4 / NULL NULL 1 4 / 1 a 1 1 / 1 b 1 2 / 1 NULL 2 3 /
// 2 NULL 1 5 / 2 a 1 3 / 2 NULL 2 8 / NULL NULL 5 15).
func TestRollup(t *testing.T) {
	cols := []string{"g", "h", "cnt", "total"}
	types := []string{"BIGINT", "BIGINT", "BIGINT", "DECIMAL(32,0)"}
	spec := Spec{Visible: 4, GroupBy: []int{0, 1}, OrderBy: []OrderKey{{Column: 0}, {Column: 1}}, Rollup: true, Limit: NoLimit,
		Aggregates: []Aggregate{{Func: AggCount, Column: 2}, {Func: AggSum, Column: 3}}}
	// h: 1 stands for 'a', 2 for 'b'; the groups split over two inputs, each sorted.
	got, err := mergeAll(t, spec,
		newFake(cols, types, r("NULL", "1", "1", "4"), r("1", "1", "1", "1"), r("2", "NULL", "1", "5")),
		newFake(cols, types, r("1", "2", "1", "2"), r("2", "1", "1", "3")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"NULL|1|1|4", "NULL|NULL|1|4", "1|1|1|1", "1|2|1|2", "1|NULL|2|3", "2|NULL|1|5", "2|1|1|3", "2|NULL|2|8", "NULL|NULL|5|15"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestCountDistinctList: COUNT(DISTINCT x, y) counts each list of values once, and no list with
// a NULL.
func TestCountDistinctList(t *testing.T) {
	cols := []string{"cd", "x", "y"}
	types := []string{"BIGINT", "BIGINT", "DECIMAL(12,2)"}
	spec := Spec{Visible: 1, Limit: NoLimit, Aggregates: []Aggregate{{Func: AggCount, Column: 0, Distinct: []int{1, 2}}}}
	got, err := mergeAll(t, spec,
		newFake(cols, types, r("1", "1", "1.50"), r("1", "1", "2.00"), r("0", "2", "NULL")),
		newFake(cols, types, r("1", "1", "1.5"), r("1", "2", "1.50"), r("0", "NULL", "3.00")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
