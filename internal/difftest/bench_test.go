package difftest_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/obroute/obroute/internal/rowscan"
)

// BenchmarkMerge measures rows per second merged by obroute from hot and cold, next to
// the same rows read with plain go-sql-driver/mysql from one server holding all of them. The
// range is December 2024 (cold) and January 2025 (hot): about 167 000 rows.
//
//	go test -run '^$' -bench Merge -benchtime 5x ./internal/difftest/
//
// The ratio obroute/mysql of rows/s is the figure to watch.
func BenchmarkMerge(b *testing.B) {
	bc := newBigCluster(b, true)
	_, obroute := openObroute(b, bc.hot, bc.cold, bigNow, bigWin)
	mysql := openMySQL(b, bc.ref.DSN)
	const where = " FROM orders WHERE order_time >= '2024-12-01' AND order_time < '2025-02-01'"
	queries := []struct{ name, sql string }{
		{"union", "SELECT id, user_id, amount, status, order_time" + where},
		{"orderby", "SELECT id, user_id, amount, status, order_time" + where + " ORDER BY order_time DESC, id"},
		// One group per distinct time: about 56 000 groups, merged from both backends.
		{"groupby", "SELECT order_time, COUNT(*), SUM(amount), MIN(status), AVG(user_id)" + where + " GROUP BY order_time"},
	}
	for _, q := range queries {
		for _, side := range []struct {
			name string
			db   *sql.DB
		}{{"obroute", obroute}, {"mysql", mysql}} {
			b.Run(q.name+"/"+side.name, func(b *testing.B) {
				total := 0
				for b.Loop() {
					total += countRows(b, side.db, q.sql)
				}
				b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(total)/float64(b.N), "rows/op")
			})
		}
	}
}

// countRows reads every row of q, scanning every column, and returns how many there were.
func countRows(b *testing.B, db *sql.DB, q string) int {
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		b.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := rowscan.Targets(vals)
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}
