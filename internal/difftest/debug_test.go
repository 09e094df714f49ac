package difftest_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDebugQuery (temporary) explains and runs OBROUTE_DEBUG_SQL with ;-separated args.
func TestDebugQuery(t *testing.T) {
	q := os.Getenv("OBROUTE_DEBUG_SQL")
	if q == "" {
		t.Skip()
	}
	var args []any
	if a := os.Getenv("OBROUTE_DEBUG_ARGS"); a != "" {
		for _, s := range strings.Split(a, ";") {
			args = append(args, s)
		}
	}
	c := newCluster(t, testSeed(t), 3000, false)
	ctx := context.Background()
	ex, err := query(ctx, c.db, "EXPLAIN ROUTE "+q, args...)
	t.Logf("explain: %v %v", ex.rows, err)
	w, err := query(ctx, c.refDB, q, args...)
	t.Logf("ref: %v %v %v", w.cols, w.rows, err)
	g, err := query(ctx, c.db, q, args...)
	t.Logf("obroute: %v %v %v", g.cols, g.rows, err)
	_ = time.Second
}
