package merge

import (
	"database/sql/driver"
	"io"
	"runtime"
	"strconv"
	"testing"
)

// genRows generates n sorted rows (id = start + i*step, a text payload, a
// group key id/groupSize) without holding them, reusing one buffer the way
// go-sql-driver does.
type genRows struct {
	n, i, start, step, groupSize int64
	buf                          []byte
	closed                       bool
}

func newGen(n, start, step, groupSize int64) *genRows {
	return &genRows{n: n, start: start, step: step, groupSize: groupSize, buf: make([]byte, 0, 128)}
}

func (g *genRows) Columns() []string { return []string{"id", "payload", "grp", "cnt"} }
func (g *genRows) Close() error      { g.closed = true; return nil }
func (g *genRows) ColumnTypeDatabaseTypeName(i int) string {
	return [...]string{"BIGINT", "VARCHAR", "BIGINT", "BIGINT"}[i]
}

func (g *genRows) Next(dest []driver.Value) error {
	if g.i >= g.n {
		return io.EOF
	}
	id := g.start + g.i*g.step
	g.i++
	b := g.buf[:0]
	b = strconv.AppendInt(b, id, 10)
	n1 := len(b)
	b = append(b, "payload-for-row-"...)
	b = strconv.AppendInt(b, id, 10)
	n2 := len(b)
	b = strconv.AppendInt(b, id/g.groupSize, 10)
	n3 := len(b)
	b = append(b, '1')
	dest[0], dest[1], dest[2], dest[3] = b[:n1:n1], b[n1:n2:n2], b[n2:n3:n3], b[n3:]
	return nil
}

func TestOrderByMergeMemoryIsConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1,000,000 rows")
	}
	const perInput = 500_000
	in := []driver.Rows{newGen(perInput, 0, 2, 1), newGen(perInput, 1, 2, 1)}
	rows, err := New(Spec{OrderBy: []OrderKey{{Column: 0}}, Limit: NoLimit}, in)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	dest := make([]driver.Value, 4)
	var n int64
	for ; ; n++ {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := string(dest[0].([]byte)); n%100_000 == 0 && got != strconv.FormatInt(n, 10) {
			t.Fatalf("row %d has id %s, want %d", n, got, n)
		}
		if n%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	if n != 2*perInput {
		t.Fatalf("merged %d rows, want %d", n, 2*perInput)
	}
	growth := int64(peak) - int64(base)
	t.Logf("HeapInuse growth over %d rows: %d KiB", n, growth/1024)
	if growth > 16<<20 {
		t.Errorf("HeapInuse grew %d MiB while merging, want under 16 MiB", growth>>20)
	}
}
