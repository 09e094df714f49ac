package merge

import (
	"database/sql/driver"
	"slices"
	"testing"
	"time"
)

func TestOrderAndUnion(t *testing.T) {
	day := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	one := []string{"v"}
	type tc struct {
		name   string
		cols   []string
		types  []string
		inputs [][][]driver.Value
		spec   Spec
		want   []string
	}
	asc := []OrderKey{{Column: 0}}
	desc := []OrderKey{{Column: 0, Desc: true}}
	tests := []tc{
		{"union streams input 0 then 1", one, []string{"INT"},
			[][][]driver.Value{{r("3"), r("1")}, {r("2")}, {}},
			Spec{Limit: NoLimit}, []string{"3", "1", "2"}},
		{"integers numerically, not as text", one, []string{"BIGINT"},
			[][][]driver.Value{{r("1"), r("9"), r("10")}, {r("2"), r("100")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"1", "2", "9", "10", "100"}},
		{"NULL first ascending", one, []string{"INT"},
			[][][]driver.Value{{r("NULL"), r("-5"), r("2")}, {r("NULL"), r("-10")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"NULL", "NULL", "-10", "-5", "2"}},
		{"NULL last descending", one, []string{"INT"},
			[][][]driver.Value{{r("10"), r("3"), r("NULL")}, {r("7"), r("NULL")}},
			Spec{OrderBy: desc, Limit: NoLimit}, []string{"10", "7", "3", "NULL", "NULL"}},
		{"DECIMAL exactly, beyond float64", one, []string{"DECIMAL"},
			[][][]driver.Value{
				{r("-1.50"), r("0.10"), r("99999999999999999999.99")},
				{r("-1.05"), r("0.09"), r("100000000000000000000.00")}},
			Spec{OrderBy: asc, Limit: NoLimit},
			[]string{"-1.50", "-1.05", "0.09", "0.10", "99999999999999999999.99", "100000000000000000000.00"}},
		{"binary protocol int64 and uint64", one, []string{"UNSIGNED BIGINT"},
			[][][]driver.Value{{r(uint64(1)), r(uint64(18446744073709551615))}, {r(uint64(3))}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"1", "3", "18446744073709551615"}},
		{"DOUBLE as floats", one, []string{"DOUBLE"},
			[][][]driver.Value{{r("-1.5"), r("1e3")}, {r("2.25"), r("999.9")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"-1.5", "2.25", "999.9", "1e3"}},
		{"VARCHAR case-insensitively", one, []string{"VARCHAR"},
			[][][]driver.Value{{r("apple"), r("Cherry")}, {r("Banana"), r("date")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"apple", "Banana", "Cherry", "date"}},
		{"VARBINARY bytewise", one, []string{"VARBINARY"},
			[][][]driver.Value{{r("B"), r("a")}, {r("C"), r("b")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"B", "C", "a", "b"}},
		{"DATETIME text with fractions", one, []string{"DATETIME"},
			[][][]driver.Value{
				{r("2025-01-02 10:00:00"), r("2025-01-02 10:00:00.5")},
				{r("2025-01-02 09:59:59.999999"), r("2025-01-10 00:00:00")}},
			Spec{OrderBy: asc, Limit: NoLimit},
			[]string{"2025-01-02 09:59:59.999999", "2025-01-02 10:00:00", "2025-01-02 10:00:00.5", "2025-01-10 00:00:00"}},
		{"DATETIME as time.Time, descending", one, []string{"DATETIME"},
			[][][]driver.Value{
				{r(day("2025-03-01 00:00:00")), r(day("2024-12-31 23:59:59"))},
				{r(day("2025-01-15 12:00:00")), r("NULL")}},
			Spec{OrderBy: desc, Limit: NoLimit},
			[]string{"2025-03-01 00:00:00", "2025-01-15 12:00:00", "2024-12-31 23:59:59", "NULL"}},
		{"TIME as signed durations", one, []string{"TIME"},
			[][][]driver.Value{{r("-01:00:00"), r("12:00:00")}, {r("00:30:00"), r("100:00:00")}},
			Spec{OrderBy: asc, Limit: NoLimit}, []string{"-01:00:00", "00:30:00", "12:00:00", "100:00:00"}},
		{"three keys, mixed directions, NULLs and ties", []string{"a", "b", "c"}, []string{"INT", "VARCHAR", "DATE"},
			[][][]driver.Value{
				{r("1", "b", "2025-01-01"), r("1", "a", "2025-01-02"), r("2", "NULL", "2025-01-01")},
				{r("NULL", "x", "2025-01-01"), r("1", "B", "2025-01-03"), r("1", "a", "2025-01-01"), r("2", "z", "2025-01-05")}},
			Spec{OrderBy: []OrderKey{{Column: 0}, {Column: 1, Desc: true}, {Column: 2}}, Limit: NoLimit},
			[]string{"NULL|x|2025-01-01", "1|b|2025-01-01", "1|B|2025-01-03", "1|a|2025-01-01", "1|a|2025-01-02", "2|z|2025-01-05", "2|NULL|2025-01-01"}},
		{"two keys over three inputs, one empty", []string{"k", "n"}, []string{"VARCHAR", "INT"},
			[][][]driver.Value{{r("a", "2"), r("b", "1")}, {}, {r("a", "1"), r("A", "3"), r("c", "0")}},
			Spec{OrderBy: []OrderKey{{Column: 0}, {Column: 1}}, Limit: NoLimit},
			[]string{"a|1", "a|2", "A|3", "b|1", "c|0"}},
		{"hidden sort column is dropped", []string{"name", "ts"}, []string{"VARCHAR", "DATETIME"},
			[][][]driver.Value{{r("x", "2025-01-01 00:00:00"), r("y", "2025-02-01 00:00:00")}, {r("z", "2025-01-15 00:00:00")}},
			Spec{Visible: 1, OrderBy: []OrderKey{{Column: 1}}, Limit: NoLimit},
			[]string{"x", "z", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var text []int
			for i, typ := range tt.types {
				if typ == "VARCHAR" {
					text = append(text, i)
				}
			}
			spec := tt.spec
			cols, types, inputs := weigh(&spec, tt.cols, tt.types, text, tt.inputs...)
			var fakes []*fakeRows
			for _, rows := range inputs {
				fakes = append(fakes, newFake(cols, types, rows...))
			}
			got, err := mergeAll(t, spec, fakes...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLimitOffsetReadsFewRowsAndClosesEarly(t *testing.T) {
	odd := func() []([]driver.Value) {
		var rows [][]driver.Value
		for i := 1; i <= 19; i += 2 {
			rows = append(rows, r(i))
		}
		return rows
	}
	even := func() []([]driver.Value) {
		var rows [][]driver.Value
		for i := 2; i <= 20; i += 2 {
			rows = append(rows, r(i))
		}
		return rows
	}
	one := []string{"v"}
	types := []string{"BIGINT"}
	tests := []struct {
		name     string
		spec     Spec
		want     []string
		maxReads [2]int
	}{
		{"order by, offset 2 limit 3", Spec{OrderBy: []OrderKey{{Column: 0}}, Offset: 2, Limit: 3}, []string{"3", "4", "5"}, [2]int{5, 5}},
		{"order by desc, limit 10", Spec{OrderBy: []OrderKey{{Column: 0, Desc: true}}, Limit: 10}, []string{"20", "19", "18", "17", "16", "15", "14", "13", "12", "11"}, [2]int{10, 10}},
		{"limit 0 reads nothing", Spec{OrderBy: []OrderKey{{Column: 0}}, Limit: 0}, []string{}, [2]int{0, 0}},
		{"union limit 12 reads 2 of input 1", Spec{Limit: 12}, []string{"1", "3", "5", "7", "9", "11", "13", "15", "17", "19", "2", "4"}, [2]int{10, 2}},
		{"streaming GROUP BY reads one row past the last group", Spec{OrderBy: []OrderKey{{Column: 0}}, GroupBy: []int{0}, Limit: 3}, []string{"1", "2", "3"}, [2]int{4, 4}},
		{"offset past the end", Spec{OrderBy: []OrderKey{{Column: 0}}, Offset: 25, Limit: 5}, []string{}, [2]int{10, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ra, rb := odd(), even()
			if len(tt.spec.OrderBy) > 0 && tt.spec.OrderBy[0].Desc {
				slices.Reverse(ra) // each input sorted as the spec says
				slices.Reverse(rb)
			}
			a := newFake(one, types, ra...)
			b := newFake(one, types, rb...)
			rows, err := New(tt.spec, []driver.Rows{a, b})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, rows)
			if err != nil {
				t.Fatal(err)
			}
			if a.closed != 1 || b.closed != 1 {
				t.Errorf("inputs closed %d, %d times when Next returned io.EOF; want both closed before the caller's Close", a.closed, b.closed)
			}
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if a.reads > tt.maxReads[0] || b.reads > tt.maxReads[1] {
				t.Errorf("inputs read %d and %d rows, want at most %d and %d", a.reads, b.reads, tt.maxReads[0], tt.maxReads[1])
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if a.closed != 1 || b.closed != 1 {
				t.Errorf("Close closed inputs again: %d, %d", a.closed, b.closed)
			}
		})
	}
}
