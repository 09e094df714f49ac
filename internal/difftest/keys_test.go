package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// EnvFull asks the shard-key differential test for its full count of queries (CI runs a small
// one): OBROUTE_DIFF_FULL=1.
const EnvFull = "OBROUTE_DIFF_FULL"

// keySpace is the shard-key differential setup: three servers with the machine's zone database,
// one logical table per shard-key type split over hot and cold, and a reference holding each
// logical table's rows in one table of its name.
type keySpace struct {
	hot, cold, ref *sqltest.Backend
	types          []difftest.KeyType
	times          map[string][]time.Time
}

func newKeySpace(t *testing.T, seed uint64, rowsPerType int) *keySpace {
	t.Helper()
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "hot", "cold", "ref")
	s := &keySpace{hot: bs[0], cold: bs[1], ref: bs[2], types: difftest.KeyTypes(), times: map[string][]time.Time{}}
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, s.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	// A session in UTC loads the rows: a TIMESTAMP stores the instants given.
	conns := map[*sqltest.Backend]*sql.Conn{}
	for _, b := range bs {
		c, err := b.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(ctx, "SET time_zone = '+00:00'"); err != nil {
			t.Fatal(err)
		}
		conns[b] = c
	}
	exec := func(b *sqltest.Backend, q string, args ...any) {
		if _, err := conns[b].ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %s: %v", b.Name, q, err)
		}
	}
	for i, k := range s.types {
		rows := difftest.GenerateKeyRows(seed+uint64(i), k, rowsPerType)
		for _, r := range rows {
			if r.At != nil {
				s.times[k.SQL] = append(s.times[k.SQL], *r.At)
			}
		}
		exec(s.ref, fmt.Sprintf(difftest.KeyTableSQL, k.Logical(), k.SQL))
		for _, q := range difftest.InsertKeyRowsSQL(k.Logical(), rows, 500) {
			exec(s.ref, q)
		}
		tables := difftest.KeyTables(k.Logical())
		for j, part := range difftest.SplitKeyRows(rows, tables) {
			tb := tables[j]
			b := s.cold
			if tb.Hot {
				b = s.hot
			}
			exec(b, fmt.Sprintf(difftest.KeyTableSQL, tb.Name, k.SQL))
			for _, q := range difftest.InsertKeyRowsSQL(tb.Name, part, 500) {
				exec(b, q)
			}
			exec(s.hot, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
				tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
		}
	}
	return s
}

// open opens obroute over hot and cold and a handle on the reference, every DSN with params.
func (s *keySpace) open(t *testing.T, params string) (ob, ref *sql.DB) {
	t.Helper()
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: s.hot.DSN + params},
			{Name: "cold", Role: "cold", DSN: s.cold.DSN + params},
		},
		Metadata: config.Metadata{Backend: "hot"},
	}
	for _, k := range s.types {
		cfg.TimeTables = append(cfg.TimeTables, config.TimeTable{Table: k.Logical(), ShardKey: "ts", HotWindow: config.HotWindow{Months: 1}})
	}
	conn, err := connector.New(cfg, connector.WithClock(func() time.Time { return difftest.KeyClock }))
	if err != nil {
		t.Fatal(err)
	}
	ob = sql.OpenDB(conn)
	t.Cleanup(func() { ob.Close() })
	ref = openMySQL(t, s.ref.DSN+params)
	// Each run's sessions are new: none keeps the settings of another run.
	ob.SetMaxIdleConns(0)
	ref.SetMaxIdleConns(0)
	return ob, ref
}

// keyRun is one client-session setting the shard-key queries run in.
type keyRun struct {
	name  string
	dsn   string   // parameters added to every DSN
	setup []string // run on both sessions
	zone  string   // the session's time zone, as Go names it
	loc   string   // go-sql-driver's loc
}

// dst reports whether the run's zone has daylight saving time.
func (r keyRun) dst() bool { return strings.Contains(r.zone, "/") }

// keyRuns: four fixed offsets and two zones with daylight saving time, set by SET, by the DSN's
// time_zone parameter, or left to the server (SYSTEM, which is UTC here), with go-sql-driver's
// loc for time.Time arguments; and the sql_modes that change how times are read and stored.
var keyRuns = []keyRun{
	{name: "SET UTC", setup: []string{"SET time_zone = 'UTC'"}, zone: "UTC"},
	{name: "SET +09:00, TIME_ROUND_FRACTIONAL", setup: []string{"SET time_zone = '+09:00'", "SET sql_mode = CONCAT(@@sql_mode, ',TIME_ROUND_FRACTIONAL')"}, zone: "+09:00"},
	{name: "SET -05:00, sql_mode ''", setup: []string{"SET time_zone = '-05:00'", "SET sql_mode = ''"}, zone: "-05:00"},
	{name: "SET +05:30, ALLOW_INVALID_DATES", setup: []string{"SET time_zone = '+05:30'", "SET sql_mode = 'ALLOW_INVALID_DATES'"}, zone: "+05:30"},
	{name: "SET Europe/Berlin", setup: []string{"SET time_zone = 'Europe/Berlin'"}, zone: "Europe/Berlin"},
	{name: "SET America/New_York, NO_ZERO_DATE", setup: []string{"SET time_zone = 'America/New_York'", "SET sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,TIME_ROUND_FRACTIONAL'"}, zone: "America/New_York"},
	{name: "DSN time_zone=+09:00", dsn: "&time_zone=" + url.QueryEscape("'+09:00'"), zone: "+09:00"},
	{name: "DSN time_zone=Europe/Berlin, loc=Asia/Tokyo", dsn: "&time_zone=" + url.QueryEscape("'Europe/Berlin'") + "&loc=Asia%2FTokyo", zone: "Europe/Berlin", loc: "Asia/Tokyo"},
	{name: "the servers' default (SYSTEM)", zone: "UTC"},
	{name: "SET -05:00, loc=America/New_York", dsn: "&loc=America%2FNew_York", setup: []string{"SET time_zone = '-05:00'"}, zone: "-05:00", loc: "America/New_York"},
}

// keyTally counts a differential run.
type keyTally struct {
	compared, differ, refused, bothFailed int
	kinds, classes, refusals              map[string]int
}

// TestShardKeyDifferential runs queries over every shard-key type (DATETIME(0–6), DATE,
// TIMESTAMP(0–6)) through obroute and on one server holding all rows, in sessions of four fixed
// offsets and two zones with daylight saving time (set by SET, by the DSN, or the servers'
// default; go-sql-driver's loc for time.Time arguments) and sql_modes that change how times are
// read and stored (TIME_ROUND_FRACTIONAL, ALLOW_INVALID_DATES, NO_ZERO_DATE, none), with ranges
// ending near the tables' boundaries and the daylight-saving changes, empty ranges and a table
// whose other columns are all NULL. Rows and column metadata (name, type, nullability,
// precision and scale, length, scan type) must be one server's, in the text protocol and
// prepared. INSERTs go through obroute and to the reference, and each row must land in the
// table whose span holds the instant stored. obroute may refuse only by its rules of the
// repeated hour (ErrTimeZone, ErrNotMergeable saying so), in the zones that have one.
func TestShardKeyDifferential(t *testing.T) {
	seed := testSeed(t)
	perRun, inserts, rowsPerType := 24, 4, 400
	if os.Getenv(EnvFull) == "1" {
		perRun, inserts, rowsPerType = 300, 30, 1200
	}
	s := newKeySpace(t, seed, rowsPerType)
	handles := map[string][2]*sql.DB{}
	tally := keyTally{kinds: map[string]int{}, classes: map[string]int{}, refusals: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for ri, run := range keyRuns {
		h, ok := handles[run.dsn]
		if !ok {
			ob, ref := s.open(t, run.dsn)
			h = [2]*sql.DB{ob, ref}
			handles[run.dsn] = h
		}
		t.Run(run.name, func(t *testing.T) {
			s.runKeys(ctx, t, run, h, keyCounts{seed: seed + uint64(ri)*7919, queries: perRun, inserts: inserts, firstID: 10_000_000 + int64(ri)*100_000}, &tally)
		})
	}
	t.Logf("seed %d: %d results compared over %d shard-key types and %d session settings, %d differ %v; %d refused by the repeated-hour rules %v; %d failed on both; shapes %v",
		seed, tally.compared, len(s.types), len(keyRuns), tally.differ, tally.classes, tally.refused, tally.refusals, tally.bothFailed, tally.kinds)
}

type keyCounts struct {
	seed             uint64
	queries, inserts int
	firstID          int64 // the INSERTs' rows are numbered after it
}

// runKeys runs one session setting's queries and INSERTs.
func (s *keySpace) runKeys(ctx context.Context, t *testing.T, run keyRun, h [2]*sql.DB, n keyCounts, tally *keyTally) {
	zone, err := time.LoadLocation(run.zone)
	if strings.HasPrefix(run.zone, "+") || strings.HasPrefix(run.zone, "-") {
		var hh, mm int
		fmt.Sscanf(run.zone[1:], "%d:%d", &hh, &mm)
		off := hh*3600 + mm*60
		if run.zone[0] == '-' {
			off = -off
		}
		zone, err = time.FixedZone(run.zone, off), nil
	}
	if err != nil {
		t.Fatal(err)
	}
	loc := time.UTC
	if run.loc != "" {
		if loc, err = time.LoadLocation(run.loc); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h[0].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	ref, err := h[1].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, q := range run.setup {
		for side, c := range map[string]*sql.Conn{"obroute": got, "reference": ref} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %s: %v", side, q, err)
			}
		}
	}
	// NOW() on the reference is obroute's clock.
	if _, err := ref.ExecContext(ctx, fmt.Sprintf("SET timestamp = %d", difftest.KeyClock.Unix())); err != nil {
		t.Fatal(err)
	}
	refPrep, gotPrep := &preparer{conn: ref}, &preparer{conn: got}
	defer refPrep.close()
	defer gotPrep.close()
	g := difftest.NewKeyGenerator(n.seed, difftest.KeyQueryConfig{Types: s.types, Zone: zone, Loc: loc, Times: s.times, FirstID: n.firstID})
	shown := 0
	report := func(i int, q difftest.KeyQuery, protocol, class string, err error) {
		tally.classes[class]++
		if shown++; shown <= 6 {
			t.Errorf("query %d (%s, %s, %s): %s: %v\n  sql:  %s\n  args: %v", i+1, q.Type.SQL, q.Kind, protocol, class, err, q.SQL, q.Args)
		}
	}
	for i := range n.queries {
		q := g.Next()
		tally.kinds[q.Kind]++
		for _, r := range protocolRuns(i, q.Query, ref, got, refPrep, gotPrep) {
			tally.compared++
			ms := diffKeys(ctx, r.ref, r.got, q.Query)
			if len(ms) == 1 && ms[0].class == "refused" {
				if !repeatedHourRule(ms[0].err) || !run.dst() {
					tally.differ++
					report(i, q, r.name, "query", ms[0].err)
					continue
				}
				tally.refused++
				tally.refusals[q.Kind]++
				continue
			}
			if len(ms) == 1 && ms[0].class == "both failed" {
				tally.bothFailed++
				continue
			}
			if len(ms) > 0 {
				tally.differ++
			}
			for _, m := range ms {
				report(i, q, r.name, m.class, m.err)
			}
		}
	}
	s.runInserts(ctx, t, g, [2]*sql.Conn{got, ref}, n.inserts, run, tally)
}

// repeatedHourRule reports whether err is one of obroute's refusals in a repeated hour.
func repeatedHourRule(err error) bool {
	msg := err.Error()
	return errors.Is(err, connector.ErrTimeZone) && (strings.Contains(msg, "repeats") || strings.Contains(msg, "does not exist in time zone") || strings.Contains(msg, "second pass")) ||
		errors.Is(err, connector.ErrNotMergeable) && strings.Contains(msg, "repeat an hour")
}

// runInserts inserts rows through obroute and into the reference, then compares the rows and
// checks that each landed in the table whose span holds its instant.
func (s *keySpace) runInserts(ctx context.Context, t *testing.T, g *difftest.KeyGenerator, c [2]*sql.Conn, n int, run keyRun, tally *keyTally) {
	got, ref := c[0], c[1]
	inserted := map[string][]int64{}
	for range n {
		q := g.NextInsert()
		tally.kinds[q.Kind]++
		tally.compared++
		_, refErr := ref.ExecContext(ctx, q.SQL, q.Args...)
		_, gotErr := got.ExecContext(ctx, q.SQL, q.Args...)
		switch {
		case refErr != nil && gotErr != nil && refErr.Error() == gotErr.Error():
			tally.bothFailed++
		case gotErr != nil && run.dst() && repeatedHourRule(gotErr):
			tally.refused++
			tally.refusals[q.Kind]++
		case refErr != nil || gotErr != nil:
			tally.differ++
			tally.classes["insert"]++
			t.Errorf("INSERT (%s): reference %v, obroute %v\n  sql:  %s\n  args: %v", q.Type.SQL, refErr, gotErr, q.SQL, q.Args)
		default:
			inserted[q.Type.Logical()] = append(inserted[q.Type.Logical()], q.ID)
		}
		if refErr == nil && gotErr != nil { // the reference keeps the rows obroute holds
			if _, err := ref.ExecContext(ctx, fmt.Sprintf("DELETE FROM %s WHERE id = %d", q.Type.Logical(), q.ID)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range s.types {
		ids := inserted[k.Logical()]
		if len(ids) == 0 {
			continue
		}
		tally.compared++
		q := difftest.Query{SQL: fmt.Sprintf("SELECT id, ts, UNIX_TIMESTAMP(ts) FROM %s WHERE ts >= '2026-09-30' AND id IN (%s) ORDER BY id", k.Logical(), joinIDs(ids)), Ordered: true}
		if ms := diffKeys(ctx, ref, got, q); len(ms) > 0 {
			tally.differ++
			for _, m := range ms {
				tally.classes["insert "+m.class]++
				t.Errorf("rows inserted into %s: %s: %v\n  sql: %s", k.Logical(), m.class, m.err, q.SQL)
			}
		}
		if err := s.placed(ctx, k, ids); err != nil {
			tally.differ++
			tally.classes["insert placement"]++
			t.Error(err)
		}
	}
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// placed checks, in UTC sessions on the backends, that every row of ids is in the table whose
// span [min_time, max_time + 1s) holds its instant (its day for a DATE).
func (s *keySpace) placed(ctx context.Context, k difftest.KeyType, ids []int64) error {
	found := 0
	for _, tb := range difftest.KeyTables(k.Logical()) {
		b := s.cold
		if tb.Hot {
			b = s.hot
		}
		conn, err := b.DB.Conn(ctx)
		if err != nil {
			return err
		}
		var n, outside int
		if _, err = conn.ExecContext(ctx, "SET time_zone = '+00:00'"); err == nil {
			err = conn.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*), COALESCE(SUM(NOT (ts >= ? AND ts < ?)), 0) FROM %s WHERE id IN (%s)", tb.Name, joinIDs(ids)),
				tb.Min.Format(time.DateTime), tb.Max.Add(time.Second).Format(time.DateTime)).Scan(&n, &outside)
		}
		conn.Close()
		if err != nil {
			return err
		}
		if outside > 0 {
			return fmt.Errorf("%d row(s) inserted into %s hold a time outside its span [%s, %s) UTC", outside, tb.Name, tb.Min.Format(time.DateTime), tb.Max.Add(time.Second).Format(time.DateTime))
		}
		found += n
	}
	if found != len(ids) {
		return fmt.Errorf("%s: %d of the %d rows inserted are in its tables", k.Logical(), found, len(ids))
	}
	return nil
}

// keyResult is what one query returned: column metadata and rows.
type keyResult struct {
	meta []string
	rows [][]any
}

// columnMeta describes a result column as database/sql reports it: name, database type,
// nullability, precision and scale, length and scan type.
func columnMeta(ct *sql.ColumnType) string {
	m := ct.Name() + " " + ct.DatabaseTypeName()
	if n, ok := ct.Nullable(); ok {
		m += fmt.Sprintf(" nullable=%v", n)
	}
	if p, sc, ok := ct.DecimalSize(); ok {
		m += fmt.Sprintf(" decimal=%d,%d", p, sc)
	}
	if l, ok := ct.Length(); ok {
		m += fmt.Sprintf(" length=%d", l)
	}
	return m + " " + ct.ScanType().String()
}

func keyQuery(ctx context.Context, db queryer, q string, args ...any) (keyResult, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return keyResult{}, err
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return keyResult{}, err
	}
	var r keyResult
	for _, ct := range cts {
		r.meta = append(r.meta, columnMeta(ct))
	}
	r.rows, err = difftest.ScanAll(rows)
	return r, err
}

// diffKeys runs q on ref and through obroute (got): "refused" when only obroute failed (the
// error for the caller to judge), "both failed" when both did with the server's error, else
// the differences.
func diffKeys(ctx context.Context, ref, got queryer, q difftest.Query) []mismatch {
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
	return append(out, diffRows(want.rows, have.rows, q)...)
}
