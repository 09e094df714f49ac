package difftest_test

import (
	"database/sql/driver"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/routing"
)

// rangeNow is the statement clock of the time-range queries: inside the data's last month, with
// microseconds so that NOW(6) and NOW() differ.
var rangeNow = time.Date(2025, 3, 15, 10, 20, 30, 654321000, time.UTC)

func rangeConfig() difftest.RangeConfig {
	return difftest.RangeConfig{Table: "orders", From: dataFrom, To: dataTo, Now: rangeNow}
}

// rangeRouter is a router over the differential test's tables with the range queries' clock,
// for counting refusals without servers.
func rangeRouter(t *testing.T) *routing.Router {
	t.Helper()
	tables := difftest.MonthlyTables("orders", dataFrom, dataTo.AddDate(0, -1, 0), boundary)
	snap, err := metadata.NewSnapshot(tables, rangeNow)
	if err != nil {
		t.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Backends: []routing.Backend{{Name: "hot", Role: routing.RoleHot}, {Name: "cold", Role: routing.RoleCold}},
		Default:  "hot",
		Time: &routing.TimeConfig{
			Tables:   []routing.TimeTable{{Table: "orders", ShardKey: "order_time", Window: window}},
			Snapshot: func() *metadata.Snapshot { return snap },
			Clock:    func() time.Time { return rangeNow },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRangeRefusals routes 3 000 generated time-range queries and logs the share refused, by
// reason. Every one has a bounded range that obroute can route: none may be refused.
func TestRangeRefusals(t *testing.T) {
	seed := testSeed(t)
	r := rangeRouter(t)
	g := difftest.NewRangeGenerator(seed, rangeConfig())
	const n = 3000
	byReason := map[string]int{}
	byKind := map[string]int{}
	shown := 0
	for range n {
		q := g.Next()
		args := make([]driver.NamedValue, len(q.Args))
		for i, a := range q.Args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		_, err := r.Route(routing.Input{Statement: r.Analyze(q.SQL), Args: args, Session: &routing.SessionState{}})
		if err == nil {
			continue
		}
		reason := routing.RefusalReason(err)
		byReason[reason]++
		byKind[q.Kind]++
		if shown++; shown <= 5 {
			t.Errorf("refused (%s): %v\n  sql:  %s\n  args: %v", reason, err, q.SQL, q.Args)
		}
	}
	refused := 0
	for _, c := range byReason {
		refused += c
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(byReason)) {
		parts = append(parts, k+" "+strconv.Itoa(byReason[k]))
	}
	t.Logf("time-range queries: %d of %d refused (%.1f%%): %s; refused by shape %v", refused, n, 100*float64(refused)/n, strings.Join(parts, ", "), byKind)
}
