package merge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/obroute/obroute/sqltest"
)

// drain reads rows to the end and returns how many there were.
func drain(tb testing.TB, rows driver.Rows) int {
	dest := make([]driver.Value, len(rows.Columns()))
	n := 0
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}

func reportRows(b *testing.B, total int) {
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
}

func benchFake(b *testing.B, spec Spec, groupSize int64, wantRows int) {
	const perInput = 100_000
	total := 0
	b.ReportAllocs()
	for b.Loop() {
		in := []driver.Rows{newGen(perInput, 0, 2, groupSize), newGen(perInput, 1, 2, groupSize)}
		rows, err := New(spec, in)
		if err != nil {
			b.Fatal(err)
		}
		if n := drain(b, rows); n != wantRows {
			b.Fatalf("got %d rows, want %d", n, wantRows)
		}
		rows.Close()
		total += 2 * perInput
	}
	reportRows(b, total)
}

// Fake-input benchmarks: rows/s is input rows merged per second.
// BenchmarkFakeInputsOnly is the cost of the fakes themselves (boxing each
// []byte into a driver.Value allocates, as in go-sql-driver).
func BenchmarkFakeInputsOnly(b *testing.B) {
	const perInput = 100_000
	total := 0
	b.ReportAllocs()
	for b.Loop() {
		total += drain(b, newGen(perInput, 0, 2, 1)) + drain(b, newGen(perInput, 1, 2, 1))
	}
	reportRows(b, total)
}
func BenchmarkUnion(b *testing.B) { benchFake(b, Spec{Limit: NoLimit}, 1, 200_000) }
func BenchmarkOrderBy(b *testing.B) {
	benchFake(b, Spec{OrderBy: []OrderKey{{Column: 0}}, Limit: NoLimit}, 1, 200_000)
}
func BenchmarkGroupByStreaming(b *testing.B) {
	benchFake(b, Spec{OrderBy: []OrderKey{{Column: 2}}, GroupBy: []int{2}, Aggregates: []Aggregate{{Func: AggCount, Column: 3}}, Limit: NoLimit}, 10, 20_000)
}
func BenchmarkGroupByHash(b *testing.B) {
	benchFake(b, Spec{GroupBy: []int{2}, Aggregates: []Aggregate{{Func: AggCount, Column: 3}, {Func: AggSum, Column: 0}}, Limit: NoLimit}, 10, 20_000)
}

// Real-server benchmarks: the same 200k rows through go-sql-driver/mysql from
// one query, and as two halves on two connections merged by ORDER BY.

const benchRows = 200_000

// openServers fills table t (benchRows rows) in a fresh database on the shared test server
// (sqltest.Shared: skipped when unreachable, a failure with OBROUTE_REQUIRE_SERVERS=1) and
// returns n handles on it.
func openServers(tb testing.TB, n int) []*sql.DB {
	tb.Helper()
	b := sqltest.Shared(tb, "merge")[0]
	for _, q := range []string{
		"CREATE TABLE t (id BIGINT PRIMARY KEY, grp INT NOT NULL, amount DECIMAL(12,2), name VARCHAR(32) COLLATE utf8mb4_general_ci, created DATETIME(3))",
		fmt.Sprintf("INSERT INTO t SELECT seq, seq %% 1000, IF(seq %% 97 = 0, NULL, (seq * 7919 %% 100000) / 100), "+
			"CONCAT(ELT(1 + seq %% 4, 'alpha', 'Alpha', 'BETA', 'beta '), seq %% 50), "+
			"TIMESTAMPADD(SECOND, seq * 13 %% 999983, '2025-01-01') + INTERVAL (seq %% 1000) * 1000 MICROSECOND FROM seq_1_to_%d", benchRows),
	} {
		b.Exec(tb, q)
	}
	// The rows as go-sql-driver gives them by default: no parseTime.
	dsn, _, _ := strings.Cut(b.DSN, "?")
	dbs := make([]*sql.DB, n)
	for i := range dbs {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// rawQueries runs queries[i] on a connection of dbs[i] (with args[i], if
// any, as a prepared statement) and hands all the driver.Rows to use; the
// connections are released after use returns.
func rawQueries(tb testing.TB, dbs []*sql.DB, queries []string, args [][]any, use func([]driver.Rows)) {
	tb.Helper()
	ctx := context.Background()
	conns := make([]*sql.Conn, len(dbs))
	for i, db := range dbs {
		c, err := db.Conn(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	var rows []driver.Rows
	var run func(i int)
	run = func(i int) {
		if i == len(conns) {
			use(rows)
			return
		}
		err := conns[i].Raw(func(dc any) error {
			var named []driver.NamedValue
			if args != nil {
				for j, a := range args[i] {
					named = append(named, driver.NamedValue{Ordinal: j + 1, Value: a})
				}
			}
			if named == nil { // text protocol
				r, err := dc.(driver.QueryerContext).QueryContext(ctx, queries[i], nil)
				if err != nil {
					return err
				}
				rows = append(rows, r)
				run(i + 1)
				return nil
			}
			// With arguments go-sql-driver prepares: the binary protocol.
			stmt, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, queries[i])
			if err != nil {
				return err
			}
			defer stmt.Close()
			r, err := stmt.(driver.StmtQueryContext).QueryContext(ctx, named)
			if err != nil {
				return err
			}
			rows = append(rows, r)
			run(i + 1)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	run(0)
}

func BenchmarkMariaDBOneQuery(b *testing.B) {
	db := openServers(b, 1)[0]
	total := 0
	for b.Loop() {
		rawQueries(b, []*sql.DB{db}, []string{"SELECT id, grp, amount, name, created FROM t ORDER BY id"}, nil, func(in []driver.Rows) {
			total += drain(b, in[0])
			in[0].Close()
		})
	}
	reportRows(b, total)
}

func BenchmarkMariaDBOneQueryDatabaseSQL(b *testing.B) {
	db := openServers(b, 1)[0]
	total := 0
	for b.Loop() {
		rows, err := db.Query("SELECT id, grp, amount, name, created FROM t ORDER BY id")
		if err != nil {
			b.Fatal(err)
		}
		var id, grp int64
		var amount, name, created sql.RawBytes
		for rows.Next() {
			if err := rows.Scan(&id, &grp, &amount, &name, &created); err != nil {
				b.Fatal(err)
			}
			total++
		}
		if err := rows.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, total)
}

func BenchmarkMariaDBTwoHalvesMerged(b *testing.B) {
	dbs := openServers(b, 2)
	db1, db2 := dbs[0], dbs[1]
	half := fmt.Sprint(benchRows / 2)
	queries := []string{
		"SELECT id, grp, amount, name, created FROM t WHERE id <= " + half + " ORDER BY id",
		"SELECT id, grp, amount, name, created FROM t WHERE id > " + half + " ORDER BY id",
	}
	for _, mode := range []struct {
		name string
		spec Spec
	}{
		{"union", Spec{Limit: NoLimit}},
		{"orderby", Spec{OrderBy: []OrderKey{{Column: 0}}, Limit: NoLimit}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			total := 0
			for b.Loop() {
				rawQueries(b, []*sql.DB{db1, db2}, queries, nil, func(in []driver.Rows) {
					m, err := New(mode.spec, in)
					if err != nil {
						b.Fatal(err)
					}
					total += drain(b, m)
					if err := m.Close(); err != nil {
						b.Fatal(err)
					}
				})
			}
			if total != b.N*benchRows {
				b.Fatalf("merged %d rows, want %d", total, b.N*benchRows)
			}
			reportRows(b, total)
		})
	}
}
