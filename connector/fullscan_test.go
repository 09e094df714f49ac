package connector_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
)

// With allow_full_scan a statement without a shard-key range reads every physical table, hot and
// cold, with the exact merge; it reaches the history store: a declared L1 is refused, and so is
// a statement without the cold_query hint under require_cold_query. EXPLAIN ROUTE says so.
func TestFullScan(t *testing.T) {
	f := newLogicalFixture(t, func(tt *config.TimeTable) { tt.AllowFullScan = true })
	for _, q := range []string{
		"SELECT COUNT(*), SUM(amount), MIN(order_time), MAX(id) FROM orders",
		"SELECT id, amount FROM orders ORDER BY amount DESC LIMIT 5",
		"SELECT id FROM orders WHERE amount > 150 ORDER BY id",
	} {
		_, got := readText(t, f.db, q)
		_, want := readText(t, f.one.DB, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, one server: %v", q, got, want)
		}
	}
	if _, err := f.db.Query("/*+ OBROUTE(query_level=L1) */ SELECT COUNT(*) FROM orders"); !errors.Is(err, connector.ErrLevelViolation) {
		t.Errorf("a full scan declared L1: %v, want ErrLevelViolation", err)
	}
	lines, err := f.c.ExplainLines(t.Context(), "SELECT COUNT(*) FROM orders")
	if err != nil || !strings.Contains(fmt.Sprint(lines), "full scan of every physical table") {
		t.Errorf("EXPLAIN ROUTE of a full scan: %v %v", lines, err)
	}
	g := newLogicalFixture(t, func(tt *config.TimeTable) { tt.AllowFullScan, tt.RequireColdQuery = true, true })
	if _, err := g.db.Query("SELECT COUNT(*) FROM orders"); !errors.Is(err, connector.ErrColdQueryRequired) {
		t.Errorf("a full scan under require_cold_query: %v, want ErrColdQueryRequired", err)
	}
	_, got := readText(t, g.db, "/* cold_query */ SELECT COUNT(*) FROM orders")
	if fmt.Sprint(got) != "[[12]]" {
		t.Errorf("a full scan with the cold_query hint: %v", got)
	}
	// Without allow_full_scan it is refused, as before.
	h := newLogicalFixture(t, nil)
	if _, err := h.db.Query("SELECT COUNT(*) FROM orders"); !errors.Is(err, connector.ErrNoTimeRange) {
		t.Errorf("no range, no allow_full_scan: %v, want ErrNoTimeRange", err)
	}
}
