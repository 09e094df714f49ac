package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRows is an in-memory driver.Rows that behaves like go-sql-driver's:
// every []byte it hands out lives in one buffer that it overwrites with '#'
// on the next Next and on Close, so a merge that keeps a []byte too long
// sees garbage. It counts the rows it handed out.
type fakeRows struct {
	cols    []string
	types   []string // ColumnTypeDatabaseTypeName; nil: same for all inputs' tests
	rows    [][]driver.Value
	pos     int
	reads   int   // rows handed out
	failAt  int   // Next returns failErr instead of row failAt (0 = never; 1-based)
	failErr error // error to return
	closed  int   // Close calls
	buf     []byte
}

func newFake(cols, types []string, rows ...[]driver.Value) *fakeRows {
	return &fakeRows{cols: cols, types: types, rows: rows, buf: make([]byte, 0, 1<<12)}
}

func (f *fakeRows) Columns() []string { return f.cols }

func (f *fakeRows) scribble() {
	b := f.buf[:cap(f.buf)]
	for i := range b {
		b[i] = '#'
	}
}

func (f *fakeRows) Close() error {
	f.closed++
	f.scribble()
	return nil
}

func (f *fakeRows) Next(dest []driver.Value) error {
	if f.closed > 0 {
		return errors.New("fakeRows: Next after Close")
	}
	if f.failAt > 0 && f.pos+1 == f.failAt {
		return f.failErr
	}
	if f.pos >= len(f.rows) {
		return io.EOF
	}
	f.scribble()
	f.buf = f.buf[:0]
	for i, v := range f.rows[f.pos] {
		if b, ok := v.([]byte); ok {
			start := len(f.buf)
			if len(f.buf)+len(b) > cap(f.buf) {
				panic("fakeRows: buffer too small")
			}
			f.buf = append(f.buf, b...)
			dest[i] = f.buf[start:len(f.buf):len(f.buf)]
			continue
		}
		dest[i] = v
	}
	f.pos++
	f.reads++
	return nil
}

// A type "DECIMAL(p,s)" reports DECIMAL with precision p and scale s; a plain "DECIMAL" is
// DECIMAL(34,2), the SUM of a DECIMAL(12,2).
func (f *fakeRows) ColumnTypeDatabaseTypeName(i int) string {
	name, _, _ := strings.Cut(f.types[i], "(")
	return name
}
func (f *fakeRows) ColumnTypeNullable(i int) (bool, bool) { return true, true }
func (f *fakeRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	var p, s int64
	if n, _ := fmt.Sscanf(f.types[i], "DECIMAL(%d,%d)", &p, &s); n == 2 {
		return p, s, true
	}
	if f.types[i] == "DECIMAL" {
		return 34, 2, true
	}
	return 0, 0, false
}
func (f *fakeRows) ColumnTypeScanType(i int) reflect.Type { return reflect.TypeFor[[]byte]() }

// plainRows hides every optional interface of a fakeRows.
type plainRows struct{ f *fakeRows }

func (p plainRows) Columns() []string              { return p.f.Columns() }
func (p plainRows) Close() error                   { return p.f.Close() }
func (p plainRows) Next(dest []driver.Value) error { return p.f.Next(dest) }

// r builds a text-protocol row: strings become []byte, "NULL" becomes nil;
// other values are kept as they are (binary protocol values).
func r(vals ...any) []driver.Value {
	row := make([]driver.Value, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			if x == "NULL" {
				row[i] = nil
			} else {
				row[i] = []byte(x)
			}
		case int:
			row[i] = int64(x)
		default:
			row[i] = v
		}
	}
	return row
}

// render writes a value as text for comparing with hand-written expectations.
func render(v driver.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

// readAll reads every row of rows and renders each as "v1|v2|…".
func readAll(t testing.TB, rows driver.Rows) ([]string, error) {
	t.Helper()
	dest := make([]driver.Value, len(rows.Columns()))
	var out []string
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		parts := make([]string, len(dest))
		for i, v := range dest {
			parts[i] = render(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
}

// mergeAll runs New over the fakes and returns the rendered rows.
func mergeAll(t testing.TB, spec Spec, fakes ...*fakeRows) ([]string, error) {
	t.Helper()
	in := make([]driver.Rows, len(fakes))
	for i, f := range fakes {
		in[i] = f
	}
	rows, err := New(spec, in)
	if err != nil {
		return nil, err
	}
	out, err := readAll(t, rows)
	if cerr := rows.Close(); cerr != nil && err == nil {
		err = cerr
	}
	for i, f := range fakes {
		if f.closed != 1 {
			t.Errorf("input %d closed %d times, want exactly once", i, f.closed)
		}
	}
	return out, err
}

// ciSignature is the signature the server gives utf8mb4_general_ci: one level, PAD SPACE, a
// space weighing 0x0020.
var ciSignature = []byte("utf8mb4_general_ci 1\x04\x00 \x00 ")

// ciWeight is the weight column the server sends for s under utf8mb4_general_ci, for ASCII
// text: the collation's name, then two bytes per character, letters as capitals.
func ciWeight(s string) []byte {
	w := []byte("utf8mb4_general_ci ")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		w = append(w, 0, c)
	}
	return w
}

// weigh appends to every row, for each text column listed, the column's weight (ciWeight;
// NULL for NULL), names the new columns w<i>, and points spec.Weights at them; columns beyond
// the original ones become hidden.
func weigh(spec *Spec, cols, types []string, text []int, inputs ...[][]driver.Value) ([]string, []string, [][][]driver.Value) {
	n := len(cols)
	if spec.Visible == 0 {
		spec.Visible = n
	}
	spec.Weights = make([]int, n+len(text))
	spec.Collations = make([][]byte, n+len(text))
	cols, types = slices.Clone(cols), slices.Clone(types)
	for j, c := range text {
		spec.Weights[c] = n + j
		spec.Collations[c] = ciSignature
		cols = append(cols, fmt.Sprintf("w%d", c))
		types = append(types, "VARBINARY")
	}
	out := make([][][]driver.Value, len(inputs))
	for i, rows := range inputs {
		for _, row := range rows {
			row = slices.Clone(row)
			for _, c := range text {
				if b, ok := row[c].([]byte); ok {
					row = append(row, ciWeight(string(b)))
				} else {
					row = append(row, nil)
				}
			}
			out[i] = append(out[i], row)
		}
	}
	return cols, types, out
}
