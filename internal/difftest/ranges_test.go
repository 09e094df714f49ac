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

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
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
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"},
		Time: &routing.TimeConfig{
			Tables:   []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow(window)}},
			Snapshot: func() *metadata.Snapshot { return snap },
			Clock:    func() time.Time { return rangeNow },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.SetShardKeyColumns(map[string]routing.ShardKeyColumn{tables[0].Name: {Type: routing.ShardKeyDatetime}})
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

// preparer runs every query as a prepared statement: binary protocol even without arguments.
type preparer struct {
	conn *sql.Conn
	last *sql.Stmt
}

func (p *preparer) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	p.close()
	st, err := p.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	p.last = st
	return st.QueryContext(ctx, args...)
}

func (p *preparer) close() {
	if p.last != nil {
		p.last.Close()
		p.last = nil
	}
}

// protocolRun is one way to run a query on the reference and through obroute.
type protocolRun struct {
	name     string
	ref, got queryer
}

// protocolRuns are the runs of query i: in the text protocol ("binary" with ? arguments) on the
// sessions ref and got, and every third one again prepared (binary protocol) on refPrep and gotPrep.
func protocolRuns(i int, q difftest.Query, ref, got, refPrep, gotPrep queryer) []protocolRun {
	runs := []protocolRun{{"text", ref, got}}
	if len(q.Args) > 0 {
		runs[0].name = "binary"
	}
	if i%3 == 0 {
		runs = append(runs, protocolRun{"prepared", refPrep, gotPrep})
	}
	return runs
}

// testRanges runs generated time-range queries through obroute, whose clock stands at rangeNow,
// and on the reference server, whose session evaluates NOW() at the same instant (SET
// TIMESTAMP), in three client-session time zones: the backends' default (UTC, read back by the
// connector), '+08:00' and '-05:30' (SET time_zone on both sides). Every query runs over the
// text protocol (or binary with ? arguments), and every third one again prepared (binary
// protocol). Column names, column types and rows must be the same; obroute must refuse none.
func testRanges(t *testing.T, c *cluster, seed uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, db := openObroute(t, c.hot, c.cold, rangeNow, window)
	zones := []struct {
		name string
		loc  *time.Location
		n    int
	}{{"", time.UTC, 700}, {"+08:00", time.FixedZone("+08:00", 8*3600), 300}, {"-05:30", time.FixedZone("-05:30", -(5*3600 + 1800)), 200}}
	var total, text, binary, prepared, failed int
	classes, refusals, kinds := map[string]int{}, map[string]int{}, map[string]int{}
	for zi, z := range zones {
		ref, err := c.refDB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		setup := []string{fmt.Sprintf("SET timestamp = %d.%06d", rangeNow.Unix(), rangeNow.Nanosecond()/1000)}
		if z.name != "" {
			setup = append(setup, "SET time_zone = '"+z.name+"'")
		}
		for _, s := range setup {
			if _, err := ref.ExecContext(ctx, s); err != nil {
				t.Fatalf("reference: %s: %v", s, err)
			}
		}
		if z.name != "" {
			if _, err := got.ExecContext(ctx, setup[1]); err != nil {
				t.Fatalf("obroute: %s: %v", setup[1], err)
			}
		}
		refPrep, gotPrep := &preparer{conn: ref}, &preparer{conn: got}
		cfg := rangeConfig()
		cfg.Zone = z.loc
		g := difftest.NewRangeGenerator(seed+uint64(zi), cfg)
		for i := range z.n {
			q := g.Next()
			kinds[q.Kind]++
			runs := protocolRuns(i, q, ref, got, refPrep, gotPrep)
			for _, r := range runs {
				total++
				switch r.name {
				case "text":
					text++
				case "binary":
					binary++
				default:
					prepared++
				}
				ms := diffOn(ctx, r.ref, r.got, q)
				if len(ms) > 0 {
					failed++
				}
				for _, m := range ms {
					classes[m.class]++
					if m.class == "query" && strings.HasPrefix(m.err.Error(), "obroute: ") {
						refusals[routing.RefusalReason(m.err)]++
					}
					if classes[m.class] <= 6 {
						t.Errorf("time zone %q, query %d of seed %d (%s): %s: %v\n  sql:  %s\n  args: %v", z.name, i+1, g.Seed(), r.name, m.class, m.err, q.SQL, q.Args)
					}
				}
			}
		}
		refPrep.close()
		gotPrep.close()
		ref.Close()
		got.Close()
	}
	t.Logf("%d time-range runs (%d text protocol, %d binary with ? args, %d prepared; shapes %v): %d differ %v; obroute refused %v",
		total, text, binary, prepared, kinds, failed, classes, refusals)
}
