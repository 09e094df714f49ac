package difftest_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
)

// answeredShapes are the report shapes obroute answers: none of their queries may be refused.
var answeredShapes = map[string]bool{"expression": true, "hidden_group": true, "star_order": true, "star_distinct": true, "distinct_aggregate": true, "rollup": true, "derived": true, "union": true, "subquery_one_table": true, "derived_flat": true}

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

// TestDifferentialReports runs generated report queries through obroute over hot and cold and on
// the reference server holding every row, under div_precision_increment 0, 2, 4, 9, 12 and 30,
// in the text protocol (or binary with ? arguments) and every third one again prepared (binary
// protocol), and compares the rows and the six column type properties (name, type, DECIMAL
// size, length, nullability, scan type). The shapes obroute answers must not be refused; the others must be refused with
// one of the router's refusals or answered exactly.
func TestDifferentialReports(t *testing.T) {
	seed := testSeed(t)
	c := newCluster(t, seed, 3000, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ref, err := c.refDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	got, err := c.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	refPrep, gotPrep := &preparer{conn: ref}, &preparer{conn: got}
	defer refPrep.close()
	defer gotPrep.close()
	g := difftest.NewReportGenerator(seed+4, reportConfig())
	n := 600
	if testing.Short() {
		n = 150
	}
	runs, failed := 0, 0
	classes, refused, drawn := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range n {
		q := g.Next()
		drawn[q.Kind]++
		if i%25 == 0 {
			set := fmt.Sprintf("SET SESSION div_precision_increment = %d", []int{4, 0, 2, 9, 12, 30}[(i/25)%6])
			for _, conn := range []*sql.Conn{ref, got} {
				if _, err := conn.ExecContext(ctx, set); err != nil {
					t.Fatalf("%s: %v", set, err)
				}
			}
		}
		for _, pr := range protocolRuns(i, q, ref, got, refPrep, gotPrep) {
			runs++
			ms := diffReport(ctx, pr.ref, pr.got, q)
			if len(ms) == 1 && ms[0].class == "query" && !answeredShapes[q.Kind] && strings.HasPrefix(ms[0].err.Error(), "obroute: ") &&
				routing.RefusalReason(ms[0].err) != "other" {
				refused[q.Kind+" "+routing.RefusalReason(ms[0].err)]++
				continue
			}
			if len(ms) > 0 {
				failed++
			}
			for _, m := range ms {
				classes[m.class]++
				if classes[m.class] <= 6 {
					t.Errorf("query %d of seed %d (%s): %s: %v\n  sql:  %s\n  args: %v", i+1, g.Seed(), pr.name, m.class, m.err, q.SQL, q.Args)
				}
			}
		}
	}
	t.Logf("%d report queries, %d runs (shapes %s): %d differ %v; refused (not answered shapes) %s", n, runs, counts(drawn), failed, classes, counts(refused))
}

// diffReport runs q on the reference and through obroute and returns their differences in the
// six column type properties and in the rows (strings folded to lower case when q says).
func diffReport(ctx context.Context, ref, got queryer, q difftest.Query) []mismatch {
	want, have, out := diffTypes(ctx, ref, got, q.SQL, q.Args)
	if want == nil {
		return out
	}
	return append(out, diffRows(want.rows, have.rows, q)...)
}
