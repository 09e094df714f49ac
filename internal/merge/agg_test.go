package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestAggregates(t *testing.T) {
	// g, COUNT(*), SUM(x), MIN(x), MAX(x), AVG(x) with its hidden SUM(x), COUNT(x) and
	// div_precision_increment.
	cols := []string{"g", "cnt", "total", "lo", "hi", "avg", "avg_sum", "avg_cnt", "incr"}
	types := []string{"VARCHAR", "BIGINT", "DECIMAL", "DECIMAL", "DECIMAL", "DECIMAL(16,6)", "DECIMAL", "BIGINT", "BIGINT"}
	aggs := []Aggregate{
		{Func: AggCount, Column: 1},
		{Func: AggSum, Column: 2},
		{Func: AggMin, Column: 3},
		{Func: AggMax, Column: 4},
		{Func: AggAvg, Column: 5, Sum: 6, Count: 7, Increment: 8, Arg: ArgColumn},
	}
	in0 := [][]driver.Value{
		r("a", "2", "12.50", "1.00", "9.00", "0", "10.00", "2", "4"),
		r("b", "1", "NULL", "NULL", "NULL", "NULL", "NULL", "0", "4"),
		r("c", "3", "0.10", "-5.00", "0.05", "0", "1.00", "3", "4"),
		r("e", "3", "-2.00", "-1.00", "-0.50", "0", "-2.00", "3", "4"),
	}
	in1 := [][]driver.Value{
		r("a", "1", "1.25", "0.50", "20.00", "0", "5.00", "1", "4"),
		r("b", "2", "NULL", "NULL", "NULL", "NULL", "NULL", "0", "4"),
		r("d", "1", "-0.01", "7.00", "7.00", "0", "2.00", "1", "4"),
		r("e", "1", "99999999999999999999.99", "-3.00", "100000000000000000000.00", "NULL", "NULL", "0", "4"),
	}
	want := []string{
		"a|3|13.75|0.50|20.00|5.000000",
		"b|3|NULL|NULL|NULL|NULL",
		"c|3|0.10|-5.00|0.05|0.333333",
		"d|1|-0.01|7.00|7.00|2.000000",
		"e|4|99999999999999999997.99|-3.00|100000000000000000000.00|-0.666667",
	}
	shuffled := func(rows [][]driver.Value) [][]driver.Value {
		out := slices.Clone(rows)
		slices.Reverse(out)
		return out
	}
	tests := []struct {
		name     string
		in0, in1 [][]driver.Value
		spec     Spec
		want     []string
	}{
		{"streaming, inputs sorted by the group key", in0, in1,
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: aggs, Limit: NoLimit}, want},
		{"hash, unsorted inputs, output sorted by ORDER BY", shuffled(in0), shuffled(in1),
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 1, Desc: true}, {Column: 0}}, GroupBy: []int{0}, Aggregates: aggs, Limit: NoLimit},
			[]string{want[4], want[0], want[1], want[2], want[3]}},
		{"streaming with HAVING on an aggregate", in0, in1,
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: aggs, Limit: NoLimit,
				Having: Cmp(OpGt, Col(2), Lit(1))}, // SUM > 1: NULL and small sums dropped
			[]string{want[0], want[4]}},
		{"hash with HAVING on a hidden column and OFFSET/LIMIT", shuffled(in0), shuffled(in1),
			Spec{Visible: 6, OrderBy: []OrderKey{{Column: 0, Desc: true}}, GroupBy: []int{0}, Aggregates: aggs, Offset: 1, Limit: 2,
				Having: Cmp(OpGe, Col(7), Lit(1))}, // total COUNT(x) ≥ 1 drops b
			[]string{want[3], want[2]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			wcols, wtypes, in := weigh(&spec, cols, types, []int{0}, tt.in0, tt.in1)
			got, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestAvgScaleAndRounding(t *testing.T) {
	cols := []string{"avg", "s", "c", "incr"}
	avg := func(arg ArgKind) []Aggregate {
		return []Aggregate{{Func: AggAvg, Column: 0, Sum: 1, Count: 2, Increment: 3, Arg: arg}}
	}
	tests := []struct {
		name     string
		avgType  string
		arg      ArgKind
		in0, in1 []driver.Value
		want     string
	}{
		{"SUM of INT: scale 0 + 4, half rounds up", "DECIMAL(14,4)", ArgColumn, r("0", "1", "20", "4"), r("0", "0", "12", "4"), "0.0313"}, // 1/32 = 0.03125
		{"negative half rounds away from zero", "DECIMAL(14,4)", ArgColumn, r("0", "-1", "20", "4"), r("0", "0", "12", "4"), "-0.0313"},
		{"scale 2 + 4", "DECIMAL(16,6)", ArgColumn, r("0", "10.00", "2", "4"), r("0", "5.00", "1", "4"), "5.000000"},
		{"repeating decimal", "DECIMAL(16,6)", ArgColumn, r("0", "2.00", "2", "4"), r("0", "0.00", "1", "4"), "0.666667"},
		{"div_precision_increment 2", "DECIMAL(14,4)", ArgColumn, r("0", "2.00", "2", "2"), r("0", "0.00", "1", "2"), "0.6667"},
		{"scale 5 + 4 = one word: the server truncates", "DECIMAL(19,9)", ArgColumn, r("0", "2.00000", "2", "4"), r("0", "0.00000", "1", "4"), "0.666666666"},
		{"an exact sum of an expression: rounded to the result's scale", "DECIMAL(20,10)", ArgArithmetic,
			r("0", "1.333333333000000000000000000000000000", "2", "4"), r("0", "0.666666666000000000000000000000000000", "1", "4"), "0.6666666663"},
		{"all NULL is NULL", "DECIMAL(16,6)", ArgColumn, r("NULL", "NULL", "0", "4"), r("NULL", "NULL", "0", "4"), "NULL"},
		{"binary protocol DECIMAL text and int64 counts", "DECIMAL(15,5)", ArgColumn, r([]byte("0"), []byte("7.5"), int64(2), int64(4)), r([]byte("0"), []byte("0.5"), int64(2), int64(4)), "2.00000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			types := []string{tt.avgType, "DECIMAL", "BIGINT", "BIGINT"}
			got, err := mergeAll(t, Spec{Visible: 1, Aggregates: avg(tt.arg), Limit: NoLimit},
				newFake(cols, types, tt.in0), newFake(cols, types, tt.in1))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("got %q, want [%q]", got, tt.want)
			}
		})
	}
	t.Run("undecidable rounding is refused", func(t *testing.T) {
		// A whole word of digits, and an argument whose digits the server may keep more of.
		types := []string{"DECIMAL(19,9)", "DECIMAL", "BIGINT", "BIGINT"}
		_, err := mergeAll(t, Spec{Visible: 1, Aggregates: avg(ArgArithmetic), Limit: NoLimit},
			newFake(cols, types, r("0", "2.00000", "2", "4")), newFake(cols, types, r("0", "0", "1", "4")))
		if !errors.Is(err, ErrNotExact) {
			t.Fatalf("err = %v, want ErrNotExact", err)
		}
		t.Log(err)
	})
	t.Run("sessions with different div_precision_increment are refused", func(t *testing.T) {
		types := []string{"DECIMAL(16,6)", "DECIMAL", "BIGINT", "BIGINT"}
		_, err := mergeAll(t, Spec{Visible: 1, Aggregates: avg(ArgColumn), Limit: NoLimit},
			newFake(cols, types, r("0", "1.00", "1", "4")), newFake(cols, types, r("0", "1.00", "1", "2")))
		if !errors.Is(err, ErrNotExact) {
			t.Fatalf("err = %v, want ErrNotExact", err)
		}
	})
}

// TestExactSum: a SUM whose partials the server rounds for display (an argument with a
// division) is summed from its exact partials and rounded once, to the result's scale.
func TestExactSum(t *testing.T) {
	cols := []string{"sum", "exact"}
	types := []string{"DECIMAL(38,6)", "DECIMAL(65,38)"}
	spec := Spec{Visible: 1, Aggregates: []Aggregate{{Func: AggSum, Column: 0, Exact: 1}}, Limit: NoLimit}
	// 0.333333333 + 0.333333333 displayed: 0.333333 + 0.333333 = 0.666666; one server: 0.666667.
	third := "0.33333333300000000000000000000000000000"
	got, err := mergeAll(t, spec, newFake(cols, types, r("0.333333", third)), newFake(cols, types, r("0.333333", third)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"0.666667"}) {
		t.Errorf("got %q, want [0.666667]", got)
	}
	_, err = mergeAll(t, spec, newFake(cols, types, r("0.333333", third)), newFake(cols, types, r("1.000000", "NULL")))
	if !errors.Is(err, ErrNotExact) {
		t.Errorf("an inexact partial: err = %v, want ErrNotExact", err)
	}
}

// TestAggregateGoTypes checks that merged aggregates keep the Go types of the
// partials, so database/sql scans them as it would from one server.
func TestAggregateGoTypes(t *testing.T) {
	cols := []string{"cnt", "sum_dec", "sum_dbl", "sum_int", "min_dbl", "avg_dbl", "avg_sum", "avg_cnt", "incr"}
	types := []string{"BIGINT", "DECIMAL", "DOUBLE", "BIGINT", "DOUBLE", "DOUBLE", "DOUBLE", "BIGINT", "BIGINT"}
	aggs := []Aggregate{
		{Func: AggCount, Column: 0}, {Func: AggSum, Column: 1}, {Func: AggSum, Column: 2},
		{Func: AggSum, Column: 3}, {Func: AggMin, Column: 4}, {Func: AggAvg, Column: 5, Sum: 6, Count: 7, Increment: 8},
	}
	tests := []struct {
		name     string
		in0, in1 []driver.Value
		want     string
	}{
		{"text protocol",
			r("2", "1.10", "0.1", "5", "2.5", "1", "1", "1", "4"), r("3", "2.205", "0.2", "-7", "-0.5", "0.66", "2", "3", "4"),
			"[]uint8:5 []uint8:3.31 []uint8:0.30000000000000004 []uint8:-2 []uint8:-0.5 []uint8:0.75"},
		{"binary protocol",
			r(int64(2), []byte("1.10"), 0.5, int64(5), float64(2.5), float64(1), float64(1), int64(1), int64(4)),
			r(int64(3), []byte("2.20"), 0.25, int64(-7), float64(-0.5), float64(0.66), float64(2), int64(3), int64(4)),
			"int64:5 []uint8:3.30 float64:0.75 int64:-2 float64:-0.5 float64:0.75"},
		{"binary protocol FLOAT", r(int64(1), "NULL", float32(0.5), int64(0), float32(1.5), float32(3), float32(3), int64(4), int64(4)),
			r(int64(1), "NULL", float32(0.25), int64(0), float32(2.5), float32(0), float32(0), int64(0), int64(4)),
			"int64:2 <nil>:NULL float32:0.75 int64:0 float32:1.5 float32:0.75"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := New(Spec{Visible: 6, Aggregates: aggs, Limit: NoLimit},
				[]driver.Rows{newFake(cols, types, tt.in0), newFake(cols, types, tt.in1)})
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			dest := make([]driver.Value, len(rows.Columns()))
			if err := rows.Next(dest); err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(dest))
			for i, v := range dest {
				parts[i] = fmt.Sprintf("%T:%s", v, render(v))
			}
			if got := strings.Join(parts, " "); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestGroupByCaseInsensitiveKeys(t *testing.T) {
	cols := []string{"name", "n"}
	types := []string{"VARCHAR", "BIGINT"}
	count := []Aggregate{{Func: AggCount, Column: 1}}
	in0 := [][]driver.Value{r("alpha", "1"), r("beta ", "2")}
	in1 := [][]driver.Value{r("ALPHA", "4"), r("Beta", "8"), r("gamma", "16")}
	want := []string{"alpha|5", "beta|10", "gamma|16"}
	for _, spec := range []Spec{
		{OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: count, Limit: NoLimit},
		{GroupBy: []int{0}, Aggregates: count, Limit: NoLimit},
	} {
		wcols, wtypes, in := weigh(&spec, cols, types, []int{0}, in0, in1)
		got, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got { // either input's spelling of a key may come first
			got[i] = strings.ToLower(strings.ReplaceAll(got[i], " ", ""))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ordered=%v: got %q, want %q", len(spec.OrderBy) > 0, got, want)
		}
	}
}

func TestGroupByWithoutAggregatesAndScalarAggregates(t *testing.T) {
	cols := []string{"k", "n"}
	types := []string{"INT", "BIGINT"}
	tests := []struct {
		name     string
		spec     Spec
		in0, in1 [][]driver.Value
		want     []string
	}{
		{"GROUP BY alone removes duplicate keys across inputs",
			Spec{OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Limit: NoLimit},
			[][]driver.Value{r("1", "7"), r("3", "7")}, [][]driver.Value{r("1", "7"), r("2", "7"), r("3", "7")},
			[]string{"1|7", "2|7", "3|7"}},
		{"COUNT without GROUP BY sums one row per input",
			Spec{Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, Limit: NoLimit},
			[][]driver.Value{r("NULL", "5")}, [][]driver.Value{r("NULL", "0")},
			[]string{"NULL|5"}},
		{"group keys decimal-equal: 1 and 1.0 in an INT column",
			Spec{GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggSum, Column: 1}}, Limit: NoLimit},
			[][]driver.Value{r("1", "2")}, [][]driver.Value{r(int64(1), "3")},
			[]string{"1|5"}},
		{"NULL keys form one group",
			Spec{GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, Limit: NoLimit},
			[][]driver.Value{r("NULL", "2"), r("4", "1")}, [][]driver.Value{r("NULL", "3")},
			[]string{"NULL|5", "4|1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mergeAll(t, tt.spec, newFake(cols, types, tt.in0...), newFake(cols, types, tt.in1...))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
