package connector_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
)

// A plain EXPLAIN (and FORMAT=JSON, ANALYZE) of a statement split across tables is the EXPLAIN of
// each sub-query on its backend, in plan order, naming the physical tables.
func TestPlainExplainOfSplitStatement(t *testing.T) {
	f := newLogicalFixture(t, nil)
	const q = "SELECT id, amount FROM orders WHERE order_time >= '2026-09-01' ORDER BY id"
	for _, prefix := range []string{"EXPLAIN ", "EXPLAIN EXTENDED ", "DESCRIBE "} {
		cols, rows := readText(t, f.db, prefix+q)
		ti := -1
		for i, c := range cols {
			if c == "table" {
				ti = i
			}
		}
		if ti < 0 {
			t.Fatalf("%s: columns %v", prefix, cols)
		}
		var tables []string
		for _, r := range rows {
			tables = append(tables, r[ti])
		}
		for _, m := range f.months {
			if !strings.Contains(strings.Join(tables, " "), m) {
				t.Errorf("%s: tables %v do not name %s", prefix, tables, m)
			}
		}
	}
	for _, prefix := range []string{"EXPLAIN FORMAT=JSON ", "ANALYZE ", "ANALYZE FORMAT=JSON "} {
		_, rows := readText(t, f.db, prefix+q)
		text := fmt.Sprint(rows)
		if len(rows) < 2 || !strings.Contains(text, f.months[0]) || !strings.Contains(text, f.months[3]) {
			t.Errorf("%s: %d rows %.300s", prefix, len(rows), text)
		}
	}
	// A statement on one table is the server's EXPLAIN of the statement as rewritten.
	_, rows := readText(t, f.db, "EXPLAIN SELECT * FROM orders WHERE order_time >= '2026-12-01'")
	if len(rows) != 1 || !strings.Contains(fmt.Sprint(rows), f.months[3]) {
		t.Errorf("EXPLAIN of a one-table statement: %v", rows)
	}
	// EXPLAIN ROUTE stays obroute's.
	cols, _ := readText(t, f.db, "EXPLAIN ROUTE "+q)
	if !reflect.DeepEqual(cols, []string{"section", "step", "detail"}) {
		t.Errorf("EXPLAIN ROUTE columns %v", cols)
	}
	// ANALYZE runs the statement: a write split across tables is refused.
	if _, err := f.db.Exec("ANALYZE UPDATE orders SET amount = amount WHERE order_time >= '2026-11-01'"); !errors.Is(err, connector.ErrNotMergeable) {
		t.Errorf("ANALYZE of a split UPDATE: %v, want ErrNotMergeable", err)
	}
}
