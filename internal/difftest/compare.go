package difftest

import (
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/obroute/obroute/internal/rowscan"
)

// ScanAll reads every row of rows as canonical text cells (NULL as nil), and closes rows.
func ScanAll(rows *sql.Rows) ([][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := rowscan.Targets(vals)
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			vals[i] = Cell(v)
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// Cell turns a scanned value into its canonical form: nil for NULL, else a string (times as
// 'YYYY-MM-DD hh:mm:ss[.ffffff]', bytes as text, numbers in Go's %v).
func Cell(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return string(x)
	case time.Time:
		if x.Nanosecond() != 0 {
			return x.Format("2006-01-02 15:04:05.999999")
		}
		return x.Format(time.DateTime)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func rowKey(r []any) string {
	var b strings.Builder
	for i, c := range r {
		if i > 0 {
			b.WriteString(" | ")
		}
		if c == nil {
			b.WriteString("NULL")
		} else {
			fmt.Fprintf(&b, "%q", Cell(c))
		}
	}
	return b.String()
}

// Compare reports the first difference between want (the reference) and got, in order when
// ordered is set, else as multisets. The error shows the differing rows.
func Compare(want, got [][]any, ordered bool) error {
	if ordered {
		for i := 0; i < len(want) || i < len(got); i++ {
			switch {
			case i >= len(got):
				return fmt.Errorf("row %d missing: want %s (got %d rows, want %d)", i+1, rowKey(want[i]), len(got), len(want))
			case i >= len(want):
				return fmt.Errorf("row %d extra: got %s (got %d rows, want %d)", i+1, rowKey(got[i]), len(got), len(want))
			case rowKey(want[i]) != rowKey(got[i]):
				return fmt.Errorf("row %d differs:\n got %s\nwant %s", i+1, rowKey(got[i]), rowKey(want[i]))
			}
		}
		return nil
	}
	count := map[string]int{}
	for _, r := range want {
		count[rowKey(r)]++
	}
	for _, r := range got {
		count[rowKey(r)]--
	}
	var missing, extra []string
	for k, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	sort.Strings(missing)
	sort.Strings(extra)
	const show = 5
	return fmt.Errorf("result sets differ (got %d rows, want %d): %d missing, e.g. %s; %d extra, e.g. %s",
		len(got), len(want), len(missing), strings.Join(missing[:min(show, len(missing))], "; "), len(extra), strings.Join(extra[:min(show, len(extra))], "; "))
}
