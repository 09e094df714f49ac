package difftest_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// The big data set: 1 000 000 orders in twelve monthly tables from July 2024 to June 2025, six
// cold and six hot (clock 2025-06-15, window current month + 5 previous: boundary 2025-01-01).
const bigRows = 1_000_000

var (
	bigFrom  = time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	bigLast  = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	bigNow   = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	bigWin   = metadata.HotWindow{Months: 5}
	bigScan  = "SELECT id, user_id, amount, status, order_time FROM orders WHERE order_time >= '2024-07-01' AND order_time < '2025-07-01'"
	bigOrder = " ORDER BY order_time, id"
)

// bigCluster is hot and cold with 6 tables each, and optionally a reference server holding
// the same rows in one table.
type bigCluster struct {
	hot, cold, ref *sqltest.Backend
	tables         []metadata.Table
}

// loadSeqSQL fills table with n rows generated on the server from the Sequence engine's
// seq_1_to_n: ids k*10^7+seq, NULLs in user_id and amount, repeated amounts and statuses of
// mixed case, times spread over the table's month with ties.
func loadSeqSQL(table string, k, n int, month time.Time) string {
	secs := int64(month.AddDate(0, 1, 0).Sub(month) / time.Second)
	return fmt.Sprintf(`INSERT INTO %s (id, user_id, amount, status, order_time)
SELECT %d * 10000000 + seq,
  IF(seq %% 8 = 0, NULL, seq %% 40 + 1),
  IF(seq %% 7 = 0, NULL, (seq %% 500) + 0.25),
  ELT(seq %% 6 + 1, 'paid', 'PAID', 'Paid', 'shipped', 'refunded', 'new'),
  TIMESTAMP '%s' + INTERVAL ((seq - 1) DIV 3) * 3 * %d DIV %d SECOND
FROM seq_1_to_%d`, table, k, month.Format(time.DateTime), secs, n, n)
}

// newBigCluster starts hot and cold (and ref when withRef) and loads the 1M rows server-side.
func newBigCluster(tb testing.TB, withRef bool) *bigCluster {
	tb.Helper()
	names := []string{"bighot", "bigcold"}
	if withRef {
		names = append(names, "bigref")
	}
	// The servers sort on disk: a larger sort buffer keeps that short.
	var bs []*sqltest.Backend
	for _, name := range names {
		bs = append(bs, sqltest.MariaDBWith(tb, sqltest.MariaDBOptions{Args: []string{
			"--innodb-buffer-pool-size=128M", "--sort-buffer-size=4M"}}, name)...)
	}
	bc := &bigCluster{hot: bs[0], cold: bs[1]}
	if withRef {
		bc.ref = bs[2]
	}
	bc.tables = difftest.MonthlyTables("orders", bigFrom, bigLast, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := metadata.CreateTable(context.Background(), bc.hot.DB, metadata.DefaultTable); err != nil {
		tb.Fatal(err)
	}
	var stmts [3][]string // per backend: hot, cold, ref
	if withRef {
		stmts[2] = append(stmts[2], fmt.Sprintf(difftest.CreateTableSQL, "orders"))
	}
	for k, t := range bc.tables {
		n := bigRows / len(bc.tables)
		if k < bigRows%len(bc.tables) {
			n++
		}
		b := 1
		if t.Hot {
			b = 0
		}
		stmts[b] = append(stmts[b], fmt.Sprintf(difftest.CreateTableSQL, t.Name), loadSeqSQL(t.Name, k+1, n, t.Min))
		if withRef {
			stmts[2] = append(stmts[2], loadSeqSQL("orders", k+1, n, t.Min))
		}
		bc.hot.Exec(tb, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			t.Name, t.Min.Format(time.DateTime), t.Max.Format(time.DateTime), t.Hot)
	}
	execOnEach(tb, bs, stmts[:])
	return bc
}

// heapPeak samples the Go heap every few milliseconds until stopped, and returns the peak.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestMillionRowScan: an ordered scan of 1 000 000 rows across 2 backends × 6
// tables streams with the Go heap under 64 MiB, and LIMIT 10 OFFSET k reads at most 10 + k rows
// from each backend's result, counted by the servers' Rows_sent.
func TestMillionRowScan(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 1 000 000 rows into two MariaDB servers; runs without -short")
	}
	start := time.Now()
	bc := newBigCluster(t, false)
	_, db := openObroute(t, bc.hot, bc.cold, bigNow, bigWin)
	t.Logf("loaded %d rows into 2 × 6 tables in %s", bigRows, time.Since(start).Round(time.Millisecond))
	ctx := context.Background()

	sent := func() (hot, cold int64) {
		return bc.hot.StatusCounter(t, "Rows_sent"), bc.cold.StatusCounter(t, "Rows_sent")
	}
	// Each StatusCounter call sends one row itself: measure that overhead.
	h0, c0 := sent()
	h1, c1 := sent()
	overheadHot, overheadCold := h1-h0, c1-c0

	// The ordered scan.
	scanStart := time.Now()
	stop := heapPeak()
	rows, err := db.QueryContext(ctx, bigScan+bigOrder)
	if err != nil {
		t.Fatal(err)
	}
	var (
		n                   int
		id                  int64
		user                *int64
		amount, status      *string
		when, prevWhen      time.Time
		prevID              int64
		outOfOrder, nullAmt int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &user, &amount, &status, &when); err != nil {
			t.Fatal(err)
		}
		if n > 0 && (when.Before(prevWhen) || when.Equal(prevWhen) && id <= prevID) {
			outOfOrder++
		}
		if amount == nil {
			nullAmt++
		}
		prevWhen, prevID = when, id
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	peak := stop()
	h2, c2 := sent()
	t.Logf("ordered scan: %d rows in %s, Go heap peak %.1f MiB; Rows_sent hot %d, cold %d",
		n, time.Since(scanStart).Round(time.Millisecond), float64(peak)/(1<<20), h2-h1-overheadHot, c2-c1-overheadCold)
	if n != bigRows || outOfOrder > 0 || nullAmt == 0 {
		t.Errorf("scan returned %d rows (%d out of order, %d NULL amounts); want %d in (order_time, id) order", n, outOfOrder, nullAmt, bigRows)
	}
	if peak >= 64<<20 {
		t.Errorf("Go heap peaked at %.1f MiB during the scan; want under 64 MiB", float64(peak)/(1<<20))
	}
	if h2-h1-overheadHot < bigRows/3 || c2-c1-overheadCold < bigRows/3 {
		t.Errorf("Rows_sent hot +%d, cold +%d for the full scan: the counter does not count what it should", h2-h1, c2-c1)
	}

	// LIMIT 10 OFFSET k: at most 10 + k rows leave each backend.
	for _, k := range []int{0, 1000, 100_000} {
		a, b := sent()
		var got []int64
		rows, err := db.QueryContext(ctx, bigScan+bigOrder+" LIMIT 10 OFFSET ?", k)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			if err := rows.Scan(&id, &user, &amount, &status, &when); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		c, d := sent()
		hotRows, coldRows := c-a-overheadHot, d-b-overheadCold
		t.Logf("LIMIT 10 OFFSET %d: %d rows; Rows_sent hot %d, cold %d (bound %d each)", k, len(got), hotRows, coldRows, 10+k)
		if len(got) != 10 {
			t.Errorf("LIMIT 10 OFFSET %d returned %d rows", k, len(got))
		}
		if hotRows > int64(10+k) || coldRows > int64(10+k) {
			t.Errorf("LIMIT 10 OFFSET %d: hot sent %d rows, cold %d; want at most %d each", k, hotRows, coldRows, 10+k)
		}
	}
}

// execOnEach runs stmts[i] in order on bs[i], the backends at once, and fails tb on the first
// error of any.
func execOnEach(tb testing.TB, bs []*sqltest.Backend, stmts [][]string) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(bs))
	for i, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range stmts[i] {
				if _, err := b.DB.Exec(s); err != nil {
					errs[i] = fmt.Errorf("%s: %w", b.Name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}
