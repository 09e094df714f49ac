package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// typeSpace is the column-type differential setup: hot and cold servers holding the monthly
// tables of the logical table "types", a reference holding all its rows in one table of that
// name, and, per text column, each value of the data mapped to the least (bytewise) value the
// reference finds equal to it under the column's collation.
type typeSpace struct {
	hot, cold, ref *sqltest.Backend
	cols           []difftest.TypeColumn
	collations     []difftest.Collation
	fold           map[string]map[string]string
	rows           int // rows in the logical table
}

func newTypeSpace(t *testing.T, seed uint64, rows int) *typeSpace {
	t.Helper()
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{}, "hot", "cold", "ref")
	s := &typeSpace{hot: bs[0], cold: bs[1], ref: bs[2], rows: rows}
	ctx := context.Background()
	all, err := showCollations(ctx, s.ref.DB)
	if err != nil {
		t.Fatal(err)
	}
	s.collations = difftest.PickCollations(seed, all)
	if len(s.collations) < 8 {
		t.Fatalf("the server lists %d usable collations of the kinds asked for; want 8 at least: %v", len(s.collations), s.collations)
	}
	s.cols = difftest.TypeColumns(s.collations)
	if err := metadata.CreateTable(ctx, s.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	conns := map[*sqltest.Backend]*sql.Conn{}
	for _, b := range bs {
		c, err := b.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// UTC: a TIMESTAMP stores the instants written; the server's default sql_mode lets zero
		// dates in.
		if _, err := c.ExecContext(ctx, "SET time_zone = '+00:00', NAMES utf8mb4"); err != nil {
			t.Fatal(err)
		}
		conns[b] = c
	}
	exec := func(b *sqltest.Backend, q string, args ...any) {
		if _, err := conns[b].ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %.300s: %v", b.Name, q, err)
		}
	}
	data := difftest.GenerateTypeRows(seed, s.cols, rows)
	exec(s.ref, difftest.TypesTableSQL("types", s.cols))
	for _, q := range difftest.InsertTypeRowsSQL("types", s.cols, data, 200) {
		exec(s.ref, q)
	}
	tables := difftest.TypesTables("types")
	for i, part := range difftest.SplitTypeRows(data, tables) {
		tb := tables[i]
		b := s.cold
		if tb.Hot {
			b = s.hot
		}
		exec(b, difftest.TypesTableSQL(tb.Name, s.cols))
		for _, q := range difftest.InsertTypeRowsSQL(tb.Name, s.cols, part, 200) {
			exec(b, q)
		}
		exec(s.hot, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	s.loadFold(t, conns[s.ref])
	return s
}

// showCollations reads SHOW COLLATION; a collation of no character set (MariaDB's uca1400_…)
// is listed as utf8mb4's and utf8mb3's, as the server names them.
func showCollations(ctx context.Context, db *sql.DB) ([]difftest.Collation, error) {
	rows, err := db.QueryContext(ctx, "SHOW COLLATION")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []difftest.Collation
	for rows.Next() {
		var name, charset sql.NullString
		rest := make([]any, len(cols)-2)
		for i := range rest {
			rest[i] = new(sql.RawBytes)
		}
		if err := rows.Scan(append([]any{&name, &charset}, rest...)...); err != nil {
			return nil, err
		}
		if charset.Valid {
			out = append(out, difftest.Collation{Name: name.String, Charset: charset.String})
			continue
		}
		for _, cs := range []string{"utf8mb4", "utf8mb3"} {
			out = append(out, difftest.Collation{Name: cs + "_" + name.String, Charset: cs})
		}
	}
	return out, rows.Err()
}

// loadFold asks the reference which values of each text column are equal under its collation.
func (s *typeSpace) loadFold(t *testing.T, conn *sql.Conn) {
	ctx := context.Background()
	s.fold = map[string]map[string]string{}
	for _, c := range s.cols {
		if c.Collation == "" {
			continue
		}
		// STRCMP compares in the column's collation; GROUP BY HEX keeps every byte variant.
		q := fmt.Sprintf("SELECT a.%[1]s, b.%[1]s FROM types a JOIN types b ON STRCMP(a.%[1]s, b.%[1]s) = 0 GROUP BY HEX(a.%[1]s), HEX(b.%[1]s)", c.Name)
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		m := map[string]string{}
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			if least, ok := m[a]; !ok || b < least {
				m[a] = b
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		s.fold[c.Name] = m
	}
}

// open opens obroute over hot and cold and a plain handle on the reference.
func (s *typeSpace) open(t *testing.T) (ob, ref *sql.DB) {
	t.Helper()
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: s.hot.DSN},
			{Name: "cold", Role: "cold", DSN: s.cold.DSN},
		},
		Metadata:   config.Metadata{Backend: "hot"},
		TimeTables: []config.TimeTable{{Table: "types", ShardKey: "ts", HotWindow: config.HotWindow{Months: 1}}},
	}
	conn, err := connector.New(cfg, connector.WithClock(func() time.Time { return difftest.TypesClock }))
	if err != nil {
		t.Fatal(err)
	}
	ob = sql.OpenDB(conn)
	t.Cleanup(func() { ob.Close() })
	return ob, openMySQL(t, s.ref.DSN)
}

// refusal reports whether err is one of obroute's refusals (a routing sentinel), which the
// differential counts; any other error of obroute alone is a difference.
func refusal(err error) bool {
	return routing.RefusalReason(err) != "other" || errors.Is(err, connector.ErrColumnsDiffer) || errors.Is(err, connector.ErrTooManyRows)
}

// TestColumnTypeDifferential runs, for each column of a table with every MariaDB type family
// (integers of every width signed and UNSIGNED at their extremes, DECIMAL(65,30) and (10,2),
// FLOAT, DOUBLE, BIT(1) and (12), CHAR, TEXT, BINARY, VARBINARY, BLOB, ENUM and SET declared
// out of alphabetical order, JSON, DATE, TIME(0) and (6), DATETIME(0), (3) and (6),
// TIMESTAMP(0) and (6) with zero dates, YEAR, a VIRTUAL and a STORED generated column) and
// VARCHARs in ten collations chosen from the server's SHOW COLLATION (NO PAD, uca1400, _bin,
// latin1, accent- or case-sensitive, utf8mb3 among them), the row, DISTINCT, GROUP BY (with
// and without ORDER BY, with LIMIT), ORDER BY … LIMIT and aggregate queries over a range across
// hot and cold tables, some in a session with time_zone +09:00, sql_mode ” or another
// div_precision_increment, through obroute and on one server holding every row. Rows and
// column metadata (name, type, nullability, precision and scale, length, scan type) must be
// one server's, in the text protocol and, every third query, prepared; a refusal (a routing
// sentinel) is counted by reason, a difference fails.
func TestColumnTypeDifferential(t *testing.T) {
	seed := testSeed(t)
	full := os.Getenv(EnvFull) == "1"
	rows, perColumn := 300, 3
	if full {
		rows = 1200
	}
	s := newTypeSpace(t, seed, rows)
	names := make([]string, len(s.collations))
	for i, c := range s.collations {
		names[i] = c.Name
	}
	t.Logf("collations: %s", strings.Join(names, ", "))
	obDB, refDB := s.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	got, err := obDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	ref, err := refDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	refPrep, gotPrep := &preparer{conn: ref}, &preparer{conn: got}
	defer refPrep.close()
	defer gotPrep.close()
	hot0, cold0 := s.hot.StatusCounter(t, "Com_select"), s.cold.StatusCounter(t, "Com_select")
	setting := -1
	var compared, differ, refused, bothFailed int
	classes, refusals, shapes := map[string]int{}, map[string]int{}, map[string]int{}
	shown := 0
	for i, q := range difftest.TypeQueries(seed, "types", s.cols, full, perColumn) {
		if q.Setting != setting {
			setting = q.Setting
			st := difftest.TypeSettings[setting]
			for _, set := range []string{"SET time_zone = " + st.TimeZone, "SET sql_mode = " + st.SQLMode, fmt.Sprintf("SET div_precision_increment = %d", st.DivPrecisionIncrement)} {
				for side, c := range map[string]*sql.Conn{"obroute": got, "reference": ref} {
					if _, err := c.ExecContext(ctx, set); err != nil {
						t.Fatalf("%s: %s: %v", side, set, err)
					}
				}
			}
		}
		shapes[q.Kind]++
		for _, r := range protocolRuns(i, q.Query, ref, got, refPrep, gotPrep) {
			compared++
			ms := s.diff(ctx, r.ref, r.got, q)
			switch {
			case len(ms) == 1 && ms[0].class == "refused" && refusal(ms[0].err):
				refused++
				refusals[q.Kind+" — "+refusalKey(ms[0].err)]++
				continue
			case len(ms) == 1 && ms[0].class == "both failed":
				bothFailed++
				continue
			case len(ms) == 0:
				continue
			}
			differ++
			for _, m := range ms {
				key := q.Column.Name + " " + q.Kind + ": " + m.class
				classes[key]++
				if shown++; shown <= 40 {
					t.Errorf("query %d (%s, %s, %s, %s): %s: %v\n  sql:  %s\n  args: %v", i+1, q.Column.Def, q.Kind, difftest.TypeSettings[q.Setting].Name, r.name, m.class, m.err, q.SQL, q.Args)
				}
			}
		}
	}
	// The control: every range spans both backends, so both must have answered most queries.
	queries := shapes["rows"] + shapes["distinct"] + shapes["group"] + shapes["group order"] + shapes["group limit"] + shapes["order limit"] + shapes["aggregates"] + shapes["sum avg"]
	if hot, cold := s.hot.StatusCounter(t, "Com_select")-hot0, s.cold.StatusCounter(t, "Com_select")-cold0; hot < int64(queries/2) || cold < int64(queries/2) {
		t.Errorf("%d queries across hot and cold: Com_select hot +%d, cold +%d; want each at least half of them", queries, hot, cold)
	}
	var rs []string
	for _, k := range slices.Sorted(maps.Keys(refusals)) {
		rs = append(rs, fmt.Sprintf("%d× %s", refusals[k], k))
	}
	t.Logf("seed %d: %d results compared over %d columns (%d collations) and %d session settings, %d differ %v; %d refused:\n  %s\n%d failed on both; shapes %v",
		seed, compared, len(s.cols), len(s.collations), len(difftest.TypeSettings), differ, classes, refused, strings.Join(rs, "\n  "), bothFailed, shapes)
}

// refusalKey is a refusal's message without the statement's particulars, to count by.
func refusalKey(err error) string {
	msg := columnRef.ReplaceAllString(err.Error(), "column N")
	msg = collationRef.ReplaceAllString(msg, "the collation C,")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return routing.RefusalReason(err) + ": " + msg
}

var (
	columnRef    = regexp.MustCompile(`column \d+( \([^ ]*\))?`)
	collationRef = regexp.MustCompile(`the collation \S+,`)
)

// diff runs q on ref and through obroute (got) like diffKeys, and compares the rows with the
// text values of Fold columns replaced by the least value equal to them.
func (s *typeSpace) diff(ctx context.Context, ref, got queryer, q difftest.TypeQuery) []mismatch {
	want, refErr := keyQuery(ctx, ref, q.SQL, q.Args...)
	have, gotErr := keyQuery(ctx, got, q.SQL, q.Args...)
	switch {
	case refErr != nil && gotErr != nil && gotErr.Error() == refErr.Error():
		return []mismatch{{"both failed", gotErr}}
	case refErr != nil && gotErr != nil:
		return []mismatch{{"errors", fmt.Errorf("obroute: %v; reference: %v", gotErr, refErr)}}
	case refErr != nil:
		return []mismatch{{"query", fmt.Errorf("reference: %w (obroute answered)", refErr)}}
	case gotErr != nil:
		return []mismatch{{"refused", gotErr}}
	}
	var out []mismatch
	if !slices.Equal(have.meta, want.meta) {
		out = append(out, mismatch{"metadata", fmt.Errorf("columns %q, want %q", have.meta, want.meta)})
	}
	m := s.fold[q.Column.Name]
	for _, rows := range [][][]any{want.rows, have.rows} {
		for _, r := range rows {
			for i, v := range r {
				if sv, ok := v.(string); ok && i < len(q.Fold) && q.Fold[i] {
					if least, ok := m[sv]; ok {
						r[i] = least
					}
				}
			}
		}
	}
	if q.Float && len(want.rows) == 1 && len(have.rows) == 1 {
		for i, w := range want.rows[0] {
			ws, _ := w.(string)
			gs, _ := have.rows[0][i].(string)
			wf, werr := strconv.ParseFloat(ws, 64)
			gf, gerr := strconv.ParseFloat(gs, 64)
			if werr == nil && gerr == nil && math.Abs(wf-gf) <= difftest.FloatTolerance(s.rows, q.Column.MaxAbs(), wf) {
				have.rows[0][i] = w
			}
		}
	}
	if err := difftest.Compare(want.rows, have.rows, q.Ordered); err != nil {
		out = append(out, mismatch{"rows", fmt.Errorf("%w\n  columns %q", err, want.meta)})
	}
	return out
}
