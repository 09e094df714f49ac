package merge

import (
	"database/sql/driver"
	"io"
	"strconv"
	"testing"
)

func TestTextValueKeepsItsBoxWhileTheSliceIsTheSame(t *testing.T) {
	var tv textValue
	first := tv.set(strconv.AppendInt(tv.buf(), 1234, 10))
	if got := string(first.([]byte)); got != "1234" {
		t.Fatalf("first value %q, want 1234", got)
	}
	n := int64(1000)
	var want [8]byte
	allocs := testing.AllocsPerRun(100, func() {
		n++
		if v := tv.set(strconv.AppendInt(tv.buf(), n%9000+1000, 10)); string(v.([]byte)) != string(strconv.AppendInt(want[:0], n%9000+1000, 10)) {
			t.Fatalf("value %q, want %d", v, n%9000+1000)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per value of the same length, want 0", allocs)
	}
	longer := tv.set(strconv.AppendInt(tv.buf(), 123456789, 10))
	if got := string(longer.([]byte)); got != "123456789" {
		t.Errorf("longer value %q, want 123456789", got)
	}
	shorter := tv.set(strconv.AppendInt(tv.buf(), 7, 10))
	if got := string(shorter.([]byte)); got != "7" {
		t.Errorf("shorter value %q, want 7", got)
	}
}

// heldRows hands out rows built beforehand, boxed once: reading them allocates nothing.
type heldRows struct {
	rows [][]driver.Value
	pos  int
}

func (h *heldRows) Columns() []string { return []string{"total", "note", "grp", "cnt"} }
func (h *heldRows) Close() error      { return nil }
func (h *heldRows) Next(dest []driver.Value) error {
	if h.pos >= len(h.rows) {
		return io.EOF
	}
	copy(dest, h.rows[h.pos])
	h.pos++
	return nil
}

// TestStreamedGroupsAllocateNothingPerGroup merges groups whose columns are text (as the text
// protocol returns them): once the first group has its buffers, a group whose texts keep their
// lengths costs no allocation (its copied key and note, COUNT and SUM are written in place).
func TestStreamedGroupsAllocateNothingPerGroup(t *testing.T) {
	text := func(n int64) driver.Value { return []byte(strconv.FormatInt(n, 10)) }
	// Each input: 4 rows per group g (1000 ≤ g < 1000+groups), total "11", cnt "1", note "n<g>".
	input := func(groups int64) [][]driver.Value {
		var rows [][]driver.Value
		for g := int64(1000); g < 1000+groups; g++ {
			for range 4 {
				rows = append(rows, []driver.Value{text(11), []byte("n" + strconv.FormatInt(g, 10)), text(g), text(1)})
			}
		}
		return rows
	}
	spec := Spec{Visible: 4, OrderBy: []OrderKey{{Column: 2}}, GroupBy: []int{2},
		Aggregates: []Aggregate{{Func: AggSum, Column: 0}, {Func: AggCount, Column: 3}}, Limit: NoLimit}
	merge := func(a, b *heldRows, groups int64) {
		a.pos, b.pos = 0, 0
		rows, err := New(spec, []driver.Rows{a, b})
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		dest := make([]driver.Value, 4)
		var want [24]byte
		for g := int64(0); ; g++ {
			err := rows.Next(dest)
			if err == io.EOF {
				if g != groups {
					t.Fatalf("%d groups, want %d", g, groups)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := dest[2].([]byte); string(got) != string(strconv.AppendInt(want[:0], 1000+g, 10)) {
				t.Fatalf("group %d: key %q, want %d", g, got, 1000+g)
			}
			if got := dest[1].([]byte); string(got) != string(strconv.AppendInt(append(want[:0], 'n'), 1000+g, 10)) {
				t.Fatalf("group %d: note %q", g, got)
			}
			if got := dest[0].([]byte); string(got) != "88" {
				t.Fatalf("group %d: SUM %q, want 88", g, got)
			}
			if got := dest[3].([]byte); string(got) != "8" {
				t.Fatalf("group %d: COUNT %q, want 8", g, got)
			}
		}
	}
	few0, few1 := &heldRows{rows: input(10)}, &heldRows{rows: input(10)}
	many0, many1 := &heldRows{rows: input(1010)}, &heldRows{rows: input(1010)}
	few := testing.AllocsPerRun(5, func() { merge(few0, few1, 10) })
	many := testing.AllocsPerRun(5, func() { merge(many0, many1, 1010) })
	if many != few {
		t.Errorf("%v allocations for 10 groups, %v for 1010: %.3f per group, want none", few, many, (many-few)/1000)
	}
}
