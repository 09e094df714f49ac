package difftest_test

import (
	"database/sql/driver"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/routing"
)

// answeredShapes are the report shapes obroute answers: none of their queries may be refused.
var answeredShapes = map[string]bool{}

func reportConfig() difftest.QueryConfig {
	return difftest.QueryConfig{Table: "orders", From: dataFrom, To: dataTo, Boundary: boundary}
}

// TestReportRefusals routes 3 000 generated report queries across the hot window boundary and
// logs the share refused, by reason and by shape; the shapes obroute answers must have none.
func TestReportRefusals(t *testing.T) {
	seed := testSeed(t)
	r := rangeRouter(t)
	g := difftest.NewReportGenerator(seed, reportConfig())
	const n = 3000
	byReason, byShape, drawn := map[string]int{}, map[string]int{}, map[string]int{}
	shown := 0
	for range n {
		q := g.Next()
		drawn[q.Kind]++
		args := make([]driver.NamedValue, len(q.Args))
		for i, a := range q.Args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		_, err := r.Route(routing.Input{Statement: r.Analyze(q.SQL), Args: args, Session: &routing.SessionState{}})
		if err == nil {
			continue
		}
		byReason[routing.RefusalReason(err)]++
		byShape[q.Kind]++
		if answeredShapes[q.Kind] {
			if shown++; shown <= 5 {
				t.Errorf("refused (%s): %v\n  sql:  %s\n  args: %v", routing.RefusalReason(err), err, q.SQL, q.Args)
			}
		}
	}
	refused := 0
	for _, c := range byReason {
		refused += c
	}
	t.Logf("report queries: %d of %d refused (%.1f%%): %s; refused by shape: %s (drawn: %s)", refused, n, 100*float64(refused)/n,
		counts(byReason), counts(byShape), counts(drawn))
}

// counts writes a count map as "k n, …" in key order.
func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+strconv.Itoa(m[k]))
	}
	return strings.Join(parts, ", ")
}
