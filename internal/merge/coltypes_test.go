package merge

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// TestServerQuirksRefused: what MariaDB (10.11) answers differently from one table and from a
// UNION ALL of tables is refused, not merged: MIN or MAX of a BIT column without GROUP BY (one
// table sends "4095", a UNION the bits 0x0FFF), and a partial SUM of 65 nines (a UNION clips a
// sum of DECIMAL(65,30) there, one table carries it further). A sum just below the limit, and
// MIN of a BIT column with GROUP BY, still merge.
func TestServerQuirksRefused(t *testing.T) {
	nines := strings.Repeat("9", 35) + "." + strings.Repeat("9", 30)
	tests := []struct {
		name       string
		typ        string
		agg        AggFunc
		group      bool
		in0, in1   string
		want, fail string
	}{
		{"MIN of BIT", "BIT", AggMin, false, "\x00\x05", "\x0f\xff", "", "MIN of a BIT column"},
		{"MAX of BIT", "BIT", AggMax, false, "4095", "\x0f\xff", "", "MAX of a BIT column"},
		{"MIN of BIT, grouped", "BIT", AggMin, true, "\x00\x05", "\x0f\xff", "g|\x00\x05", ""},
		{"SUM reaching DECIMAL(65)'s largest", "DECIMAL(65,30)", AggSum, false, nines, "1.5", "", "largest DECIMAL(65) value"},
		{"SUM of the negative largest", "DECIMAL(65,30)", AggSum, false, "-" + nines, "1.5", "", "largest DECIMAL(65) value"},
		{"SUM below it", "DECIMAL(65,30)", AggSum, false, strings.Repeat("9", 34) + ".5", "0.5", "1" + strings.Repeat("0", 34) + ".000000000000000000000000000000", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, types, text := []string{"x"}, []string{tt.typ}, []int(nil)
			row0, row1 := r(tt.in0), r(tt.in1)
			spec := Spec{Visible: 1, Aggregates: []Aggregate{{Func: tt.agg, Column: 0}}, Limit: NoLimit}
			if tt.group {
				cols, types, text = []string{"g", "x"}, []string{"VARCHAR", tt.typ}, []int{0}
				row0, row1 = r("g", tt.in0), r("g", tt.in1)
				spec = Spec{Visible: 2, Aggregates: []Aggregate{{Func: tt.agg, Column: 1}}, GroupBy: []int{0}, OrderBy: []OrderKey{{Column: 0}}, Limit: NoLimit}
			}
			wcols, wtypes, in := weigh(&spec, cols, types, text, [][]driver.Value{row0}, [][]driver.Value{row1})
			got, err := mergeAll(t, spec, newFake(wcols, wtypes, in[0]...), newFake(wcols, wtypes, in[1]...))
			if tt.fail != "" {
				if !errors.Is(err, ErrNotExact) || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("got %q, %v; want ErrNotExact saying %q", got, err, tt.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
