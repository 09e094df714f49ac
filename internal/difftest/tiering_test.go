package difftest_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
	"github.com/obroute/obroute/tiering"
)

// The store of the move tests: December 2024 on cold, January to March 2025 on hot; the clock
// stands on 2025-03-15 and the hot window is the current month plus one, so January has left
// it and is the table moved, while March is where the application writes.
var (
	tierMonths = []time.Time{
		time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
	}
	tierNow    = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	tierWindow = metadata.HotWindow{Months: 1}
)

const (
	movedTable = "orders_202501"
	// The obroute processes refresh their metadata every 300 ms and every second; the move
	// waits 3 s between the flip and the fence (statements here are short).
	tierSettle = "3s"
)

// tierCluster is hot, cold and a reference server holding every row in one table, with two
// obroute processes (connectors refreshing at different intervals) and a configuration file
// for the obroute command.
type tierCluster struct {
	hot, cold, ref *sqltest.Backend
	refDB          *sql.DB
	dbs            []*sql.DB
	cfgFile        string
	janRows        int
}

// newTierCluster starts the servers and loads January with janRows rows (the other months
// with 20 000, 20 000 and 10 000), server-side.
func newTierCluster(t testing.TB, janRows int) *tierCluster {
	t.Helper()
	start := time.Now()
	var bs []*sqltest.Backend
	for _, name := range []string{"tierhot", "tiercold", "tierref"} {
		bs = append(bs, sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{
			"--innodb-buffer-pool-size=128M", "--sort-buffer-size=4M"}}, name)...)
	}
	c := &tierCluster{hot: bs[0], cold: bs[1], ref: bs[2], janRows: janRows}
	if err := metadata.CreateTable(context.Background(), c.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	stmts := [3][]string{{}, {}, {fmt.Sprintf(difftest.CreateTableSQL, "orders")}}
	for k, m := range tierMonths {
		name := fmt.Sprintf("orders_%04d%02d", m.Year(), m.Month())
		n := []int{20_000, janRows, 20_000, 10_000}[k]
		on, loc := 0, "hot"
		if k == 0 {
			on, loc = 1, "cold"
		}
		stmts[on] = append(stmts[on], fmt.Sprintf(difftest.CreateTableSQL, name), loadSeqSQL(name, k+1, n, m))
		stmts[2] = append(stmts[2], loadSeqSQL("orders", k+1, n, m))
		c.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, ?, ?)",
			name, m.Format(time.DateTime), m.AddDate(0, 1, 0).Add(-time.Second).Format(time.DateTime), loc == "hot", loc)
	}
	execOnEach(t, bs, stmts[:])
	c.refDB = openMySQL(t, c.ref.DSN)
	for _, refresh := range []time.Duration{300 * time.Millisecond, time.Second} {
		c.dbs = append(c.dbs, c.openObroute(t, refresh))
	}
	c.cfgFile = filepath.Join(t.TempDir(), "obroute.yaml")
	yaml := fmt.Sprintf("backends:\n  - {name: hot, role: hot, dsn: %q}\n  - {name: cold, role: cold, dsn: %q}\n"+
		"time_tables:\n  - {table: orders, shard_key: order_time, hot_window: {months: 1}}\nmetadata: {backend: hot, refresh: 1s}\n", c.hot.DSN, c.cold.DSN)
	if err := os.WriteFile(c.cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d rows (January %d) into hot, cold and the reference in %s", 50_000+janRows, janRows, time.Since(start).Round(time.Millisecond))
	return c
}

func (c *tierCluster) config(refresh time.Duration) *config.Config {
	return &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: c.hot.DSN},
			{Name: "cold", Role: "cold", DSN: c.cold.DSN},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow(tierWindow)}},
		Metadata:   config.Metadata{Backend: "hot", Refresh: config.Duration(refresh)},
	}
}

// openObroute opens one obroute process over the cluster, refreshing its metadata every refresh.
func (c *tierCluster) openObroute(t testing.TB, refresh time.Duration) *sql.DB {
	t.Helper()
	conn, err := connector.New(c.config(refresh), connector.WithClock(func() time.Time { return tierNow }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// readQueries are the reads of the workload: ranges inside January and across both of its
// edges, as aggregates, ordered rows and groups; their expected results come from the
// reference, which no write touches (the writes go to March).
func (c *tierCluster) readQueries(t testing.TB) ([]difftest.Query, [][][]any) {
	t.Helper()
	type window struct{ from, to string }
	var windows []window
	for _, d := range []int{1, 4, 9, 14, 20, 26, 31} {
		windows = append(windows, window{fmt.Sprintf("2025-01-%02d 06:00:00", d), fmt.Sprintf("2025-01-%02d 07:30:00", d)})
	}
	windows = append(windows, window{"2024-12-31 23:00:00", "2025-01-01 01:00:00"}, window{"2025-01-31 23:00:00", "2025-02-01 01:00:00"})
	var qs []difftest.Query
	for i, w := range windows {
		qs = append(qs, difftest.Query{SQL: "SELECT COUNT(*), SUM(amount), MIN(order_time), MAX(order_time), AVG(user_id) FROM orders WHERE order_time >= ? AND order_time < ?", Args: []any{w.from, w.to}})
		qs = append(qs, difftest.Query{SQL: "SELECT id, user_id, amount, status, order_time FROM orders WHERE order_time >= ? AND order_time < ? ORDER BY order_time DESC, id LIMIT 60", Args: []any{w.from, w.to}, Ordered: true})
		if i%3 == 0 {
			qs = append(qs, difftest.Query{SQL: "SELECT user_id, COUNT(*), SUM(amount) FROM orders WHERE order_time BETWEEN ? AND ? GROUP BY user_id ORDER BY user_id", Args: []any{w.from, w.to}, Ordered: true})
		}
	}
	want := make([][][]any, len(qs))
	for i, q := range qs {
		r, err := query(context.Background(), c.refDB, q.SQL, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.rows) == 0 {
			t.Fatalf("%s %v: no rows on the reference; the reads would not test the move", q.SQL, q.Args)
		}
		want[i] = r.rows
	}
	return qs, want
}

// workload is 8 goroutines through the two obroute processes: 6 read January and its edges
// and compare each result with the reference, 2 write to March (INSERT, and UPDATE of a row
// they wrote) and mirror every write on the reference.
type workload struct {
	stop          chan struct{}
	wg            sync.WaitGroup
	reads, writes atomic.Int64
	failed, diffs atomic.Int64
	firstErr      atomic.Value
	mu            sync.Mutex
	done          [][]time.Time // per reader: when each read ended
}

func (c *tierCluster) startWorkload(t *testing.T) *workload {
	t.Helper()
	qs, want := c.readQueries(t)
	w := &workload{stop: make(chan struct{}), done: make([][]time.Time, 6)}
	ctx := context.Background()
	fail := func(err error) {
		w.failed.Add(1)
		w.firstErr.CompareAndSwap(nil, err)
	}
	for r := range 6 {
		db := c.dbs[r%2]
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for i := r; ; i++ {
				select {
				case <-w.stop:
					return
				default:
				}
				q := qs[i%len(qs)]
				got, err := query(ctx, db, q.SQL, q.Args...)
				w.reads.Add(1)
				w.done[r] = append(w.done[r], time.Now())
				if err != nil {
					fail(fmt.Errorf("%s %v: %w", q.SQL, q.Args, err))
					continue
				}
				if err := difftest.Compare(want[i%len(qs)], got.rows, q.Ordered); err != nil {
					w.diffs.Add(1)
					w.firstErr.CompareAndSwap(nil, fmt.Errorf("%s %v: %w", q.SQL, q.Args, err))
				}
			}
		}()
	}
	var nextID atomic.Int64
	nextID.Store(9_000_000_000)
	for wr := range 2 {
		db := c.dbs[wr]
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			type written struct {
				id int64
				at string
			}
			var mine []written // each writer updates only rows it wrote, so the two mirror in order
			for {
				select {
				case <-w.stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				id := nextID.Add(1)
				row := written{id, time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC).Add(time.Duration(id%432_000) * time.Second).Format(time.DateTime)}
				stmts := []struct {
					q    string
					args []any
				}{{"INSERT INTO orders (id, user_id, amount, status, order_time) VALUES (?, ?, ?, ?, ?)",
					[]any{id, id % 40, fmt.Sprintf("%d.25", id%500), []string{"new", "paid", "PAID"}[id%3], row.at}}}
				if len(mine) > 2 && id%4 == 0 {
					old := mine[len(mine)-2]
					stmts = append(stmts, struct {
						q    string
						args []any
					}{"UPDATE orders SET amount = amount + 1, status = 'shipped' WHERE order_time = ? AND id = ?", []any{old.at, old.id}})
				}
				mine = append(mine, row)
				for _, s := range stmts {
					w.writes.Add(1)
					if _, err := db.ExecContext(ctx, s.q, s.args...); err != nil {
						fail(fmt.Errorf("%s %v: %w", s.q, s.args, err))
						continue
					}
					if _, err := c.refDB.ExecContext(ctx, s.q, s.args...); err != nil {
						fail(fmt.Errorf("reference: %s: %w", s.q, err))
					}
				}
			}
		}()
	}
	return w
}

// end stops the workload and checks it: no failed statement, no difference, and March
// through obroute equal to March on the reference.
func (w *workload) end(t *testing.T, c *tierCluster) {
	t.Helper()
	close(w.stop)
	w.wg.Wait()
	t.Logf("workload: %d reads, %d writes; %d failed statements, %d differences", w.reads.Load(), w.writes.Load(), w.failed.Load(), w.diffs.Load())
	if w.failed.Load() > 0 || w.diffs.Load() > 0 {
		t.Errorf("%d statements failed and %d reads differed from the reference; first: %v", w.failed.Load(), w.diffs.Load(), w.firstErr.Load())
	}
	if w.writes.Load() < 20 || w.reads.Load() < 100 {
		t.Errorf("only %d reads and %d writes ran: the workload did not overlap the move", w.reads.Load(), w.writes.Load())
	}
	const march = "SELECT id, user_id, amount, status, order_time FROM orders WHERE order_time >= '2025-03-01' AND order_time < '2025-04-01'"
	want, err := query(context.Background(), c.refDB, march)
	if err != nil {
		t.Fatal(err)
	}
	got, err := query(context.Background(), c.dbs[0], march)
	if err != nil {
		t.Fatal(err)
	}
	if err := difftest.Compare(want.rows, got.rows, false); err != nil {
		t.Errorf("March after the writes: %v", err)
	}
}

// rate returns the reads per second that ended in [from, to).
func (w *workload) rate(from, to time.Time) float64 {
	n := 0
	for _, d := range w.done {
		for _, at := range d {
			if !at.Before(from) && at.Before(to) {
				n++
			}
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// checkMoved checks the end state of the move: cold holds every January row of the
// reference exactly once, hot holds none (neither the table nor its fenced name), the shard
// metadata places the table on cold, the move is recorded done, and verify passes.
func (c *tierCluster) checkMoved(t *testing.T) {
	t.Helper()
	sum := func(db *sql.DB, table, where string) (rows, distinct int64, checksum string) {
		t.Helper()
		q := "SELECT COUNT(*), COUNT(DISTINCT id), CAST(COALESCE(BIT_XOR(CRC32(CONCAT_WS('|', id, user_id, amount, status, order_time, " +
			"ISNULL(user_id), ISNULL(amount), ISNULL(status)))), 0) AS CHAR) FROM " + table + " WHERE " + where
		if err := db.QueryRow(q).Scan(&rows, &distinct, &checksum); err != nil {
			t.Fatal(err)
		}
		return
	}
	wr, _, wc := sum(c.ref.DB, "orders", "order_time >= '2025-01-01' AND order_time < '2025-02-01'")
	gr, gd, gc := sum(c.cold.DB, movedTable, "1 = 1")
	t.Logf("January: reference %d rows (checksum %s), cold %d rows, %d distinct ids (checksum %s)", wr, wc, gr, gd, gc)
	if wr != int64(c.janRows) || gr != wr || gd != gr || gc != wc {
		t.Errorf("cold holds %d rows of January (%d distinct, checksum %s); the reference %d (checksum %s)", gr, gd, gc, wr, wc)
	}
	for _, name := range []string{movedTable, "obroute_moved_" + movedTable} {
		var n int
		if err := c.hot.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s is still on hot (%d, %v)", name, n, err)
		}
	}
	var loc, step string
	if err := c.hot.DB.QueryRow("SELECT m.location, s.step FROM shard_metadata m JOIN shard_migration s USING (table_name) WHERE table_name = ?", movedTable).Scan(&loc, &step); err != nil || loc != "cold" || step != "done" {
		t.Errorf("after the move: location %q, step %q (%v); want cold, done", loc, step, err)
	}
	s, err := tiering.Open(c.config(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.Verify(context.Background(), tierNow); err != nil || !r.OK() {
		t.Errorf("verify after the move: %+v, %v", r, err)
	}
}

// buildCLI builds the obroute command into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "obroute")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/obroute/obroute/cmd/obroute").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/obroute: %v\n%s", err, out)
	}
	return bin
}

// migration is one run of obroute migrate as a subprocess.
type migration struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	started map[string]time.Time // when the first line of each step was read
	out     []string
	lines   chan struct{} // closed when the output ends
	began   time.Time
}

// startMigrate runs obroute migrate on the moved table with the cluster's configuration.
func (c *tierCluster) startMigrate(t *testing.T, bin string, args ...string) *migration {
	t.Helper()
	args = append([]string{"migrate", "-config", c.cfgFile, "-now", tierNow.Format(time.DateTime), "-wait", tierSettle}, args...)
	m := &migration{cmd: exec.Command(bin, append(args, movedTable)...), started: map[string]time.Time{}, lines: make(chan struct{})}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m.cmd.Stderr = m.cmd.Stdout // errors among the progress lines
	m.began = time.Now()
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(m.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			m.mu.Lock()
			m.out = append(m.out, line)
			if f := strings.Fields(line); len(f) > 1 {
				if _, ok := m.started[f[1]]; !ok {
					m.started[f[1]] = time.Now()
				}
			}
			m.mu.Unlock()
		}
	}()
	return m
}

// wait waits for the run to end and returns its error (nil: exit status 0) and its output.
func (m *migration) wait() (error, string) {
	<-m.lines
	err := m.cmd.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return err, strings.Join(m.out, "\n")
}

// kill sends SIGKILL and waits for the process to end.
func (m *migration) kill() string {
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	_, out := m.wait()
	return out
}

// step returns when the run's output first named the step.
func (m *migration) step(s string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.started[s]
	return at, ok
}

// waitState polls the move's recorded state until cond holds, and fails after a minute.
func (c *tierCluster) waitState(t *testing.T, what string, cond func(step string, copied, deleted int64) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var step string
		var copied, deleted int64
		err := c.hot.DB.QueryRow("SELECT step, rows_copied, rows_deleted FROM shard_migration WHERE table_name = ?", movedTable).Scan(&step, &copied, &deleted)
		if err == nil && cond(step, copied, deleted) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the move never reached %s", what)
}

// TestMoveMillionRowsUnderLoad: obroute migrate moves a table of
// 1 000 000 rows from hot to cold with its default chunk and rate limit while 8 goroutines
// read across it (each result compared with the reference) and write to the current month
// through two obroute processes that refresh their metadata at different times: no statement
// fails, no read differs, cold ends with every row once and hot with none. The read
// throughput before the move, during its copy and during its delete is logged (a
// measurement, not an assertion: the machine is shared).
func TestMoveMillionRowsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1 000 000 rows between two MariaDB servers; runs without -short")
	}
	rows := 1_000_000
	if s := os.Getenv("OBROUTE_MOVE_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	bin := buildCLI(t)
	c := newTierCluster(t, rows)
	w := c.startWorkload(t)
	time.Sleep(2 * time.Second) // warm-up: connections, buffer pool
	before := time.Now()
	time.Sleep(8 * time.Second)
	m := c.startMigrate(t, bin)
	err, out := m.wait()
	finished := time.Now()
	t.Logf("obroute migrate output:\n%s", out)
	if err != nil {
		t.Fatalf("obroute migrate: %v", err)
	}
	time.Sleep(5 * time.Second)
	after := time.Now()
	w.end(t, c)
	c.checkMoved(t)

	phase := func(from, to string) (time.Time, time.Time) {
		a, ok1 := m.step(from)
		b, ok2 := m.step(to)
		if !ok1 || !ok2 {
			t.Fatalf("the output names no step %s or %s", from, to)
		}
		return a, b
	}
	copyFrom, copyTo := phase("copy", "check")
	delFrom, delTo := phase("delete", "drop")
	base := w.rate(before, m.began)
	during := w.rate(m.began, finished)
	duringCopy := w.rate(copyFrom, copyTo)
	duringDelete := w.rate(delFrom, delTo)
	t.Logf("move of %d rows: %s in all, copy %s (%.0f rows/s), delete %s (%.0f rows/s)", rows, finished.Sub(m.began).Round(time.Millisecond),
		copyTo.Sub(copyFrom).Round(time.Millisecond), float64(rows)/copyTo.Sub(copyFrom).Seconds(),
		delTo.Sub(delFrom).Round(time.Millisecond), float64(rows)/delTo.Sub(delFrom).Seconds())
	afterRate := w.rate(finished, after)
	t.Logf("read throughput (8 goroutines, 6 reading): before %.1f reads/s; during the move %.1f (%.0f%%); during the copy %.1f (%.0f%%; %.0f%% of the mean of before and after, %.1f); during the delete %.1f (%.0f%%); after %.1f",
		base, during, 100*during/base, duringCopy, 100*duringCopy/base, 200*duringCopy/(base+afterRate), (base+afterRate)/2, duringDelete, 100*duringDelete/base, afterRate)
	if duringCopy == 0 {
		t.Error("no read ended during the copy")
	}
}

// TestMoveKilledAndResumed: obroute migrate killed with SIGKILL during the
// copy and again during the delete; each rerun resumes where the last one stopped, and the
// end state is the one of an uninterrupted move, with the workload of 8 goroutines running
// throughout without a failed statement or a wrong read. While the move is stopped during the
// copy, the table stays read-only on hot.
func TestMoveKilledAndResumed(t *testing.T) {
	bin := buildCLI(t)
	c := newTierCluster(t, 100_000)
	w := c.startWorkload(t)
	time.Sleep(time.Second)

	m := c.startMigrate(t, bin, "-rate", "20000")
	c.waitState(t, "30 000 rows copied", func(step string, copied, _ int64) bool { return step == "copy" && copied >= 30_000 })
	out := m.kill()
	t.Logf("first run, killed during the copy:\n%s", out)
	var step string
	var copied int64
	if err := c.hot.DB.QueryRow("SELECT step, rows_copied FROM shard_migration WHERE table_name = ?", movedTable).Scan(&step, &copied); err != nil || step != "copy" || copied >= 100_000 {
		t.Fatalf("after the kill: step %q, %d rows copied (%v); want the copy unfinished", step, copied, err)
	}
	if _, err := c.hot.DB.Exec("UPDATE " + movedTable + " SET amount = 0 WHERE id = 20000001"); err == nil || !strings.Contains(err.Error(), "is read-only: obroute migrate is moving it to cold") {
		t.Errorf("a write to the table while its move is stopped: %v; want the guard's refusal", err)
	}
	time.Sleep(time.Second)

	m = c.startMigrate(t, bin, "-rate", "20000")
	c.waitState(t, "20 000 rows deleted", func(step string, _, deleted int64) bool { return step == "delete" && deleted >= 20_000 })
	out = m.kill()
	t.Logf("second run, killed during the delete:\n%s", out)
	if !strings.Contains(out, fmt.Sprintf("copy   %d/100000 rows", copied)) {
		t.Errorf("the second run did not resume the copy at the %d rows recorded", copied)
	}
	time.Sleep(time.Second)

	m = c.startMigrate(t, bin, "-rate", "20000")
	err, out := m.wait()
	t.Logf("third run:\n%s", out)
	if err != nil {
		t.Fatalf("third run: %v", err)
	}
	if slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return strings.Contains(l, " copy ") || strings.Contains(l, " guard ") }) {
		t.Errorf("the third run copied again; it should resume the delete")
	}
	time.Sleep(time.Second)
	w.end(t, c)
	c.checkMoved(t)
}
