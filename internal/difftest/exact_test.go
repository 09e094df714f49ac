package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// textsCluster is the texts data set in one reference table and in monthly tables on hot and
// cold (three databases of the shared server), with obroute over hot and cold and the
// reference reached by plain go-sql-driver/mysql, each in the text protocol (interpolateParams)
// and in the binary protocol (server-side prepared statements).
type textsCluster struct {
	ref, hot, cold *sqltest.Backend
	// dbs[p] are the reference and obroute in protocol p: 0 text, 1 binary.
	refDB, obDB [2]*sql.DB
	// fold maps, per collation, each string of the data to the least (bytewise) string the
	// reference server finds equal to it under that collation.
	fold map[string]map[string]string
}

var protocols = [2]string{"text protocol (interpolateParams)", "binary protocol (prepared)"}

func newTextsCluster(t *testing.T, seed uint64, n int) *textsCluster {
	t.Helper()
	bs := sqltest.Shared(t, "ref", "hot", "cold")
	c := &textsCluster{ref: bs[0], hot: bs[1], cold: bs[2]}
	rows := difftest.GenerateTexts(seed, dataFrom, dataTo, n)
	tables := difftest.MonthlyTables("texts", dataFrom, dataTo.AddDate(0, -1, 0), boundary)
	load := func(b *sqltest.Backend, table string, rows []difftest.Text) {
		b.Exec(t, fmt.Sprintf(difftest.CreateTextsSQL, table))
		stmts, args := difftest.InsertTextsSQL(table, rows, 200)
		for i, s := range stmts {
			b.Exec(t, s, args[i]...)
		}
	}
	load(c.ref, "texts", rows)
	parts := difftest.SplitTexts(rows, tables)
	if len(parts[""]) > 0 {
		t.Fatalf("%d rows fit no monthly table", len(parts[""]))
	}
	if err := metadata.CreateTable(context.Background(), c.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		b := c.cold
		if tb.Hot {
			b = c.hot
		}
		load(b, tb.Name, parts[tb.Name])
		c.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	for p, param := range []string{"&interpolateParams=true", ""} {
		c.refDB[p] = openMySQL(t, c.ref.DSN+param)
		cfg := &config.Config{
			Backends: []config.Backend{
				{Name: "hot", Role: "hot", DSN: c.hot.DSN + param},
				{Name: "cold", Role: "cold", DSN: c.cold.DSN + param},
			},
			TimeTables: []config.TimeTable{{Table: "texts", ShardKey: "t_time", HotWindow: config.HotWindow(window)}},
			Metadata:   config.Metadata{Backend: "hot"},
		}
		_, c.obDB[p] = openObrouteConfig(t, cfg, clockNow)
	}
	c.loadFold(t)
	return c
}

// loadFold asks the reference server which strings of the data are equal under each
// collation the generated queries use.
func (c *textsCluster) loadFold(t *testing.T) {
	ctx := context.Background()
	conn, err := c.refDB[0].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE TEMPORARY TABLE vals (v VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY)",
		// UNION ALL: a UNION would drop values equal under some collation.
		"INSERT IGNORE INTO vals SELECT s_def FROM texts WHERE s_def IS NOT NULL UNION ALL SELECT s_bin FROM texts WHERE s_bin IS NOT NULL " +
			"UNION ALL SELECT s_lat FROM texts WHERE s_lat IS NOT NULL UNION ALL SELECT s_uni FROM texts WHERE s_uni IS NOT NULL " +
			"UNION ALL SELECT s_uca FROM texts WHERE s_uca IS NOT NULL UNION ALL SELECT s_nop FROM texts WHERE s_nop IS NOT NULL " +
			"UNION ALL SELECT note FROM texts WHERE note IS NOT NULL",
		"CREATE TEMPORARY TABLE lvals (v VARCHAR(24) CHARACTER SET latin1 COLLATE latin1_nopad_bin PRIMARY KEY)",
		"INSERT IGNORE INTO lvals SELECT s_lat FROM texts WHERE s_lat IS NOT NULL",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var def string
	if err := conn.QueryRowContext(ctx, "SELECT COLLATION(s_def) FROM texts LIMIT 1").Scan(&def); err != nil {
		t.Fatal(err)
	}
	c.fold = map[string]map[string]string{}
	colls := append(append([]string{"default"}, difftest.ExplicitCollations()...), "latin1_swedish_ci", "utf8mb4_general_nopad_ci")
	for _, coll := range colls {
		table, name := "vals", coll
		if coll == "default" {
			name = def
		}
		if strings.HasPrefix(name, "latin1") {
			table = "lvals"
		}
		// STRCMP, not =: MariaDB 10.11 answers a.v = b.v COLLATE c through the primary key's
		// own (NO PAD) collation, and misses equal strings.
		rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT a.v, MIN(b.v) FROM %s a JOIN %s b ON STRCMP(a.v COLLATE %s, b.v COLLATE %s) = 0 GROUP BY a.v", table, table, name, name))
		if err != nil {
			t.Fatalf("fold under %s: %v", name, err)
		}
		m := map[string]string{}
		for rows.Next() {
			var v, least string
			if err := rows.Scan(&v, &least); err != nil {
				t.Fatal(err)
			}
			m[v] = least
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		c.fold[coll] = m
	}
}

// TestDifferentialExact runs generated queries over text columns of six collations (with
// explicit COLLATE in ORDER BY, GROUP BY and DISTINCT, MIN and MAX of text, HAVING on text),
// AVG and SUM of divisions and expressions over aggregates (SUM(amount)/COUNT(*),
// ROUND(AVG(amount), 3), COUNT(DISTINCT s_lat)) under div_precision_increment 0, 2, 4, 9, 12 and
// 30, and columns
// whose types a UNION changes, through obroute over hot and cold and directly on one server
// holding every row, in the text and the binary protocol, and compares the values and all six
// column type properties.
func TestDifferentialExact(t *testing.T) {
	seed := testSeed(t)
	c := newTextsCluster(t, seed, 2500)
	cfg := difftest.QueryConfig{Table: "texts", From: dataFrom, To: dataTo, Boundary: boundary}
	n := 400
	if testing.Short() {
		n = 100
	}
	for p := range protocols {
		t.Run(strings.Fields(protocols[p])[0], func(t *testing.T) {
			runExact(t, c, p, difftest.NewTextGenerator(seed+uint64(p), cfg), n)
		})
	}
	t.Run("refusals", func(t *testing.T) { testExactRefusals(t, c) })
}

func runExact(t *testing.T, c *textsCluster, p int, g *difftest.TextGenerator, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ref, err := c.refDB[p].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ob, err := c.obDB[p].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	div := -1
	kinds, classes, divs := map[string]int{}, map[string]int{}, map[int]int{}
	failed := 0
	for i := range n {
		q := g.Next()
		kinds[q.Kind]++
		divs[q.DivPrecision]++
		if q.DivPrecision != div {
			div = q.DivPrecision
			set := fmt.Sprintf("SET SESSION div_precision_increment = %d", div)
			for _, conn := range []*sql.Conn{ref, ob} {
				if _, err := conn.ExecContext(ctx, set); err != nil {
					t.Fatalf("%s: %v", set, err)
				}
			}
		}
		ms := c.diffExact(ctx, ref, ob, q)
		if len(ms) > 0 {
			failed++
		}
		for _, m := range ms {
			classes[m.class]++
			if classes[m.class] <= 4 {
				t.Errorf("query %d of seed %d (%s, div_precision_increment %d): %s: %v\n  sql:  %s\n  args: %v",
					i+1, g.Seed(), protocols[p], q.DivPrecision, m.class, m.err, q.SQL, q.Args)
			}
		}
	}
	t.Logf("%s: %d queries (kinds %v, div_precision_increment %v): %d differ %v", protocols[p], n, kinds, divs, failed, classes)
}

// exactResult is what one query returned: the six column type properties and the rows.
type exactResult struct {
	types []string
	rows  [][]any
}

func queryExact(ctx context.Context, conn queryer, q string, args []any) (exactResult, error) {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return exactResult{}, err
	}
	var r exactResult
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return r, err
	}
	for _, ct := range cts {
		p, s, dok := ct.DecimalSize()
		l, lok := ct.Length()
		nl, nok := ct.Nullable()
		r.types = append(r.types, fmt.Sprintf("%s %s decimal(%d,%d,%v) length(%d,%v) nullable(%v,%v) %v",
			ct.Name(), ct.DatabaseTypeName(), p, s, dok, l, lok, nl, nok, ct.ScanType()))
	}
	r.rows, err = difftest.ScanAll(rows)
	return r, err
}

// diffExact runs q on the reference and through obroute and returns their differences.
func (c *textsCluster) diffExact(ctx context.Context, ref, ob *sql.Conn, q difftest.TextQuery) []mismatch {
	want, got, out := diffTypes(ctx, ref, ob, q.SQL, q.Args)
	if want == nil {
		return out
	}
	c.foldRows(want.rows, q.Fold)
	c.foldRows(got.rows, q.Fold)
	if err := difftest.Compare(want.rows, got.rows, q.Ordered); err != nil {
		out = append(out, mismatch{"rows", err})
	}
	return out
}

// diffTypes runs q on the reference and through obroute and compares the six column type
// properties (name, type, DECIMAL size, length, nullability, scan type) of their results; want
// is nil when one of them failed.
func diffTypes(ctx context.Context, ref, ob queryer, q string, args []any) (want, got *exactResult, out []mismatch) {
	w, err := queryExact(ctx, ref, q, args)
	if err != nil {
		return nil, nil, []mismatch{{"query", fmt.Errorf("reference: %w", err)}}
	}
	g, err := queryExact(ctx, ob, q, args)
	if err != nil {
		return nil, nil, []mismatch{{"query", fmt.Errorf("obroute: %w", err)}}
	}
	want, got = &w, &g
	for i := range max(len(want.types), len(got.types)) {
		w, g := "", ""
		if i < len(want.types) {
			w = want.types[i]
		}
		if i < len(got.types) {
			g = got.types[i]
		}
		if w != g {
			out = append(out, mismatch{"types", fmt.Errorf("column %d: %q, want %q", i+1, g, w)})
		}
	}
	return want, got, out
}

// foldRows replaces each string of a column that folds by the least string equal to it.
func (c *textsCluster) foldRows(rows [][]any, fold []string) {
	for _, r := range rows {
		for i, v := range r {
			s, ok := v.(string)
			if !ok || i >= len(fold) || fold[i] == "" {
				continue
			}
			if least, ok := c.fold[fold[i]][s]; ok {
				r[i] = least
			}
		}
	}
}

// testExactRefusals: what the merge cannot answer exactly is refused with
// routing.ErrNotMergeable and a way to rewrite the statement.
func testExactRefusals(t *testing.T, c *textsCluster) {
	const where = " FROM texts WHERE t_time >= '2024-11-01' AND t_time < '2025-02-01'"
	cases := []struct{ sql, fix string }{
		{"SELECT id" + where + " ORDER BY s_def COLLATE utf8mb4_uca1400_as_cs, id", "one-level collation"},
		{"SELECT id" + where + " ORDER BY s_lat COLLATE latin1_bin, id", "ORDER BY the column itself"},
		{"SELECT s_uni COLLATE utf8mb4_uca1400_as_ci AS k, COUNT(*)" + where + " GROUP BY k", "one-level collation"},
		{"SELECT s_def, COUNT(*)" + where + " GROUP BY s_def HAVING MIN(s_bin) > MAX(s_uni)", "compares text after merging"},
		{"SELECT s_def, SUM(amount/3)" + where + " GROUP BY s_def", "SUM(ROUND(amount / 3, n))"},
	}
	for _, tc := range cases {
		rows, err := c.obDB[0].Query(tc.sql)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if !errors.Is(err, routing.ErrNotMergeable) {
			t.Errorf("%s: err = %v, want routing.ErrNotMergeable", tc.sql, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: %v\ndoes not say %q", tc.sql, err, tc.fix)
		}
	}
}
