package merge

import (
	"database/sql/driver"
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestHaving(t *testing.T) {
	// k, SUM, COUNT, and a hidden k = 'C' as the sub-queries computed it.
	cols := []string{"k", "total", "n", "is_c"}
	types := []string{"VARCHAR", "DECIMAL", "BIGINT", "INT"}
	aggs := []Aggregate{{Func: AggSum, Column: 1}, {Func: AggCount, Column: 2}}
	in0 := [][]driver.Value{r("a", "1.50", "1", "0"), r("b", "NULL", "2", "0"), r("c", "-4.00", "3", "1")}
	in1 := [][]driver.Value{r("a", "2.50", "1", "0"), r("c", "4.00", "1", "1"), r("d", "0.01", "9", "0")}
	// merged: a|4.00|2  b|NULL|2  c|0.00|4  d|0.01|9
	tests := []struct {
		name string
		cond Expr
		want []string
		err  error
	}{
		{"comparison with NULL drops the row", Cmp(OpGe, Col(1), Lit(0)), []string{"a|4.00|2", "c|0.00|4", "d|0.01|9"}, nil},
		{"NOT of NULL is NULL", Not(Cmp(OpLt, Col(1), Lit(1))), []string{"a|4.00|2"}, nil},
		{"IS NULL", IsNull(Col(1)), []string{"b|NULL|2"}, nil},
		{"OR with a NULL term", Or(Cmp(OpEq, Col(1), Lit("4")), Cmp(OpGt, Col(2), Lit(5))), []string{"a|4.00|2", "d|0.01|9"}, nil},
		{"AND", And(Cmp(OpGt, Col(2), Lit(2)), Cmp(OpNe, Col(2), Lit(9))), []string{"c|0.00|4"}, nil},
		{"a condition the sub-queries computed, carried in a hidden column", Cmp(OpEq, Col(3), Lit(1)), []string{"c|0.00|4"}, nil},
		{"<=> matches NULL", Cmp(OpNullSafeEq, Col(1), Lit(nil)), []string{"b|NULL|2"}, nil},
		{"= NULL matches nothing", Cmp(OpEq, Col(1), Lit(nil)), nil, nil},
		{"exact decimal literal", Cmp(OpEq, Col(1), Lit("0.010")), []string{"d|0.01|9"}, nil},
		{"float literal against DECIMAL", Cmp(OpLt, Col(1), Lit(0.05)), []string{"c|0.00|4", "d|0.01|9"}, nil},
		// MariaDB: CAST(0.01 AS DECIMAL(10,2)) = 1e-2 is 1 (compared as doubles); exactly, the
		// double nearest 0.01 is a little more than 0.01.
		{"float literal equal to a DECIMAL as a double", Cmp(OpEq, Col(1), Lit(0.01)), []string{"d|0.01|9"}, nil},
		{"integer column against a float literal", Cmp(OpEq, Col(2), Lit(9.0)), []string{"d|0.01|9"}, nil},
		{"literal on the left", Cmp(OpGt, Lit(3), Col(2)), []string{"a|4.00|2", "b|NULL|2"}, nil},
		{"text after merging depends on a collation", Cmp(OpEq, Col(0), Lit("C")), nil, ErrNotExact},
		{"a number with a string that is no number", Cmp(OpEq, Col(1), Lit("four")), nil, ErrNotExact},
		{"column out of range", Cmp(OpEq, Col(7), Lit(1)), nil, ErrInvalidSpec},
		{"unknown operator", Cmp("LIKE", Col(2), Lit(1)), nil, ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Visible: 3, OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: aggs, Having: tt.cond, Limit: NoLimit}
			wcols, wtypes, in := weigh(&spec, cols, types, []int{0}, in0, in1)
			got, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("HAVING %s: got %q, want %q", tt.cond, got, tt.want)
			}
		})
	}
}

func TestDistinct(t *testing.T) {
	cols := []string{"name", "amount", "hidden"}
	types := []string{"VARCHAR", "DECIMAL", "INT"}
	tests := []struct {
		name     string
		spec     Spec
		in0, in1 [][]driver.Value
		want     []string
	}{
		{"union: case, trailing spaces and decimal scale do not make rows differ",
			Spec{Visible: 2, Distinct: true, Limit: NoLimit},
			[][]driver.Value{r("a", "1.0", "1"), r("B", "2", "2"), r("NULL", "NULL", "3")},
			[][]driver.Value{r("A ", "1.00", "4"), r("b", "2.00", "5"), r("c", "3", "6"), r("NULL", "NULL", "7"), r("c", "-3", "8")},
			[]string{"a|1.0", "B|2", "NULL|NULL", "c|3", "c|-3"}},
		{"ordered by a hidden column, with LIMIT",
			Spec{Visible: 1, OrderBy: []OrderKey{{Column: 2}}, Distinct: true, Limit: 2},
			[][]driver.Value{r("x", "0", "1"), r("y", "0", "4")},
			[][]driver.Value{r("X", "0", "2"), r("z", "0", "3")},
			[]string{"x", "z"}},
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
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDistinctBinaryKeepsCase(t *testing.T) {
	cols, types := []string{"b"}, []string{"VARBINARY"}
	got, err := mergeAll(t, Spec{Distinct: true, Limit: NoLimit},
		newFake(cols, types, r("a")), newFake(cols, types, r("A"), r("a")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a", "A"}) {
		t.Errorf("got %q, want [a A]", got)
	}
}

func TestNewRejects(t *testing.T) {
	types := []string{"INT", "INT"}
	tests := []struct {
		name   string
		cols1  []string
		spec   Spec
		target error
	}{
		{"column count differs", []string{"a"}, Spec{Limit: NoLimit}, ErrColumnsDiffer},
		{"column name differs", []string{"a", "c"}, Spec{Limit: NoLimit}, ErrColumnsDiffer},
		{"ORDER BY column out of range", []string{"A", "B"}, Spec{OrderBy: []OrderKey{{Column: 2}}, Limit: NoLimit}, ErrInvalidSpec},
		{"GROUP BY column negative", []string{"a", "b"}, Spec{GroupBy: []int{-1}, Limit: NoLimit}, ErrInvalidSpec},
		{"AVG without its hidden SUM, COUNT and increment", []string{"a", "b"}, Spec{Visible: 1, Aggregates: []Aggregate{{Func: AggAvg, Column: 0, Count: 1}}, Limit: NoLimit}, ErrInvalidSpec},
		{"weight in a visible column", []string{"a", "b"}, Spec{Weights: []int{1}, Limit: NoLimit}, ErrInvalidSpec},
		{"unknown aggregate", []string{"a", "b"}, Spec{Aggregates: []Aggregate{{Func: 0, Column: 1}}, Limit: NoLimit}, ErrInvalidSpec},
		{"Visible beyond the columns", []string{"a", "b"}, Spec{Visible: 3, Limit: NoLimit}, ErrInvalidSpec},
		{"negative offset", []string{"a", "b"}, Spec{Offset: -1, Limit: NoLimit}, ErrInvalidSpec},
		{"limit below -1", []string{"a", "b"}, Spec{Limit: -2}, ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFake([]string{"a", "b"}, types)
			b := newFake(tt.cols1, types)
			_, err := New(tt.spec, []driver.Rows{a, b})
			if !errors.Is(err, tt.target) {
				t.Fatalf("err = %v, want %v", err, tt.target)
			}
			t.Log(err)
			if a.closed != 1 || b.closed != 1 {
				t.Errorf("inputs closed %d, %d times; New must close them on error", a.closed, b.closed)
			}
		})
	}
	if _, err := New(Spec{}, nil); !errors.Is(err, ErrNoInputs) {
		t.Errorf("New without inputs: err = %v, want ErrNoInputs", err)
	}
}

func TestMaxHeldRows(t *testing.T) {
	cols := []string{"k", "n"}
	types := []string{"VARCHAR", "BIGINT"}
	in0 := [][]driver.Value{r("a", "1"), r("b", "1")}
	in1 := [][]driver.Value{r("A", "1"), r("c", "1")}
	tests := []struct {
		name string
		spec Spec
		ok   bool
	}{
		{"hash GROUP BY within the cap", Spec{GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, MaxHeldRows: 3, Limit: NoLimit}, true},
		{"hash GROUP BY past the cap", Spec{GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, MaxHeldRows: 2, Limit: NoLimit}, false},
		{"DISTINCT past the cap", Spec{Visible: 1, Distinct: true, MaxHeldRows: 2, Limit: NoLimit}, false},
		{"streaming GROUP BY holds one group", Spec{OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, MaxHeldRows: 1, Limit: NoLimit}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			wcols, wtypes, in := weigh(&spec, cols, types, []int{0}, in0, in1)
			_, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
			if tt.ok && err != nil {
				t.Fatal(err)
			}
			if !tt.ok && !errors.Is(err, ErrTooManyRows) {
				t.Fatalf("err = %v, want ErrTooManyRows", err)
			}
		})
	}
}

type serverError struct{ msg string }

func (e *serverError) Error() string { return e.msg }

func TestInputErrorIsReturnedUnchanged(t *testing.T) {
	cols := []string{"k", "n"}
	types := []string{"INT", "BIGINT"}
	specs := map[string]Spec{
		"union":        {Limit: NoLimit},
		"order by":     {OrderBy: []OrderKey{{Column: 0}}, Limit: NoLimit},
		"stream group": {OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, Limit: NoLimit},
		"hash group":   {GroupBy: []int{0}, Aggregates: []Aggregate{{Func: AggCount, Column: 1}}, Limit: NoLimit},
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			boom := &serverError{"Error 1317: Query execution was interrupted"}
			a := newFake(cols, types, r("1", "1"), r("2", "1"))
			b := newFake(cols, types, r("1", "1"), r("3", "1"), r("4", "1"))
			b.failAt, b.failErr = 2, boom
			rows, err := New(spec, []driver.Rows{a, b})
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(t, rows)
			if err != boom {
				t.Fatalf("err = %v, want the input's own error value", err)
			}
			dest := make([]driver.Value, 2)
			if err := rows.Next(dest); err != boom {
				t.Errorf("Next after an error = %v, want the same error again", err)
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if a.closed != 1 || b.closed != 1 {
				t.Errorf("inputs closed %d, %d times, want once each", a.closed, b.closed)
			}
		})
	}
}

// TestHeldBytesSurviveInputReuse: the fakes overwrite their buffer on every
// Next, so any []byte kept by a group, MIN/MAX or the merge heap without a
// copy would show '#'.
func TestHeldBytesSurviveInputReuse(t *testing.T) {
	cols := []string{"k", "lo", "hi"}
	types := []string{"VARCHAR", "VARCHAR", "VARCHAR"}
	aggs := []Aggregate{{Func: AggMin, Column: 1}, {Func: AggMax, Column: 2}}
	in0 := [][]driver.Value{r("key-one", "mmm", "mmm"), r("key-one", "bb", "zzzzzz"), r("key-two", "q", "q")}
	in1 := [][]driver.Value{r("key-one", "ccccc", "c"), r("key-two", "a", "a"), r("key-two", "r", "r")}
	want := []string{"key-one|bb|zzzzzz", "key-two|a|r"}
	for _, spec := range []Spec{
		{OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Aggregates: aggs, Limit: NoLimit},
		{GroupBy: []int{0}, Aggregates: aggs, Limit: NoLimit},
	} {
		wcols, wtypes, in := weigh(&spec, cols, types, []int{0, 1, 2}, in0, in1)
		got, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("streaming=%v: got %q, want %q", spec.OrderBy != nil, got, want)
		}
	}
}

// TestColumnTypes: the result reports the column types of one input (TypesFrom), or those
// given (ColumnTypes), for the visible columns; database/sql's defaults where there are none.
func TestColumnTypes(t *testing.T) {
	cols := []string{"name", "x", "hidden"}
	types := []string{"VARCHAR", "DECIMAL(13,2)", "BIGINT"}
	union := []string{"VARCHAR", "DECIMAL(12,2)", "BIGINT"} // what a UNION of two tables reports
	ct := func(rows driver.Rows) interface {
		driver.RowsColumnTypeDatabaseTypeName
		driver.RowsColumnTypeLength
		driver.RowsColumnTypeNullable
		driver.RowsColumnTypePrecisionScale
		driver.RowsColumnTypeScanType
		driver.RowsNextResultSet
	} {
		return rows.(interface {
			driver.RowsColumnTypeDatabaseTypeName
			driver.RowsColumnTypeLength
			driver.RowsColumnTypeNullable
			driver.RowsColumnTypePrecisionScale
			driver.RowsColumnTypeScanType
			driver.RowsNextResultSet
		})
	}
	rows, err := New(Spec{Visible: 2, TypesFrom: 1, Limit: NoLimit}, []driver.Rows{newFake(cols, union), newFake(cols, types)})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if got := rows.Columns(); !slices.Equal(got, []string{"name", "x"}) {
		t.Errorf("Columns = %q, want the visible names", got)
	}
	c := ct(rows)
	if got := c.ColumnTypeDatabaseTypeName(0); got != "VARCHAR" {
		t.Errorf("DatabaseTypeName(0) = %q, want VARCHAR", got)
	}
	if p, s, ok := c.ColumnTypePrecisionScale(1); p != 13 || s != 2 || !ok {
		t.Errorf("PrecisionScale(1) = %d, %d, %v; want 13, 2, true: input 1's, not the union's", p, s, ok)
	}
	if n, ok := c.ColumnTypeNullable(0); !n || !ok {
		t.Errorf("Nullable = %v, %v; want true, true", n, ok)
	}
	if l, ok := c.ColumnTypeLength(0); l != 0 || ok {
		t.Errorf("Length = %d, %v; want database/sql's default 0, false", l, ok)
	}
	if got := c.ColumnTypeScanType(0); got != reflect.TypeFor[[]byte]() {
		t.Errorf("ScanType = %v, want the input's []byte", got)
	}
	if c.HasNextResultSet() || c.NextResultSet() == nil {
		t.Error("a merged result must have no next result set")
	}

	given := []ColumnType{{DatabaseTypeName: "ENUM", HasNullable: true}, {DatabaseTypeName: "DECIMAL", Precision: 13, Scale: 2, HasPrecisionScale: true}, {}}
	rows2, err := New(Spec{Visible: 2, ColumnTypes: given, Limit: NoLimit}, []driver.Rows{newFake(cols, union)})
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	if got := ct(rows2).ColumnTypeDatabaseTypeName(0); got != "ENUM" {
		t.Errorf("DatabaseTypeName(0) with ColumnTypes = %q, want ENUM", got)
	}
	if n, ok := ct(rows2).ColumnTypeNullable(0); n || !ok {
		t.Errorf("Nullable with ColumnTypes = %v, %v; want false, true", n, ok)
	}

	bare, err := New(Spec{Visible: 2, Limit: NoLimit}, []driver.Rows{plainRows{newFake(cols, types)}})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if got := ct(bare).ColumnTypeScanType(0); got != reflect.TypeFor[any]() {
		t.Errorf("ScanType without support = %v, want any", got)
	}
	if got := ct(bare).ColumnTypeDatabaseTypeName(0); got != "" {
		t.Errorf("DatabaseTypeName without support = %q, want empty", got)
	}
}

func TestBadPartialAggregate(t *testing.T) {
	cols := []string{"s"}
	for _, tt := range []struct {
		types []string
		agg   AggFunc
		bad   driver.Value
	}{
		{[]string{"DECIMAL"}, AggSum, []byte("12,5")},
		{[]string{"BIGINT"}, AggCount, []byte("many")},
		{[]string{"DECIMAL"}, AggSum, "not a driver type"},
	} {
		_, err := mergeAll(t, Spec{Aggregates: []Aggregate{{Func: tt.agg, Column: 0}}, Limit: NoLimit},
			newFake(cols, tt.types, r("1")), newFake(cols, tt.types, []driver.Value{tt.bad}))
		if !errors.Is(err, ErrBadValue) {
			t.Errorf("%v of %q: err = %v, want ErrBadValue", tt.agg, tt.bad, err)
		}
	}
}
