package tiering_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/rowscan"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
	"github.com/obroute/obroute/tiering"
)

// moveMonths: December on cold, January (2 500 rows, loaded below) to March on hot; with the
// clock on 2025-03-15 and a window of the current month plus one, January has left it.
func moveMonths() []month {
	return []month{
		{"2024-12", "cold", []string{"2024-12-15 12:00:00"}},
		{"2025-01", "hot", nil},
		{"2025-02", "hot", []string{"2025-02-10 08:00:00"}},
		{"2025-03", "hot", []string{"2025-03-01 00:00:00"}},
	}
}

const moveNow = "2025-03-15 12:00:00"

// loadJanuary fills orders_202501 with n rows: NULLs, decimals, text beyond the BMP, times
// with fractions, both edges of the month.
func loadJanuary(t *testing.T, b *sqltest.Backend, n int) {
	t.Helper()
	b.Exec(t, fmt.Sprintf(`INSERT INTO orders_202501 (id, order_time, amount, note)
SELECT 1000 + seq, TIMESTAMP '2025-01-01 00:00:00' + INTERVAL (seq - 1) * 2678399 DIV %d SECOND + INTERVAL IF(seq %% 3 = 0, seq, 0) MICROSECOND,
  IF(seq %% 7 = 0, NULL, seq / 4), IF(seq %% 5 = 0, NULL, CONCAT('ñ😀 ', seq))
FROM seq_1_to_%d`, n-1, n))
}

// rowsOf reads every row of a table in primary-key order through the binary protocol (exact
// floats), as independent evidence of what a table holds.
func rowsOf(t testing.TB, db *sql.DB, table, order string) [][]any {
	t.Helper()
	stmt, err := db.Prepare("SELECT * FROM " + table + " WHERE 1 = ? ORDER BY " + order)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	rows, err := stmt.Query(1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := rowscan.Targets(vals)
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMove moves January from hot to cold while obroute reads across it: the plan says what
// will happen, writes to the table are refused during the move with a message naming it, every
// read returns the rows of the reference, and at the end cold holds exactly the rows hot had,
// hot holds none, the metadata places the table on cold, verify passes and a second Move
// does nothing.
func TestMove(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, moveMonths()...)
	loadJanuary(t, st.hot, 2500)
	want := rowsOf(t, st.hot.DB, "orders_202501", "id")
	now := at(t, moveNow)
	conn, db := openObroute(t, st, now)
	_ = conn
	const across = "SELECT id, order_time, amount, note FROM orders WHERE order_time >= '2024-12-31' AND order_time < '2025-02-02 12:00:00' ORDER BY order_time, id"
	ref := scanText(t, db, across)
	if len(ref) != 2500 {
		t.Fatalf("obroute reads %d rows across January before the move, want 2500", len(ref))
	}

	opts := tiering.MoveOptions{ChunkRows: 300, RowsPerSecond: -1, Settle: 700 * time.Millisecond, Now: now}
	plan, err := st.s.PlanMove(ctx, "orders_202501", opts)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := plan.Write(&text); err != nil {
		t.Fatal(err)
	}
	for _, says := range []string{"move orders_202501 (orders, 2025-01-01 00:00:00 … 2025-01-31 23:59:59) from hot (", "primary key (id); 4 columns",
		"1. guard  make orders_202501 on hot read-only", "copy in chunks of 300 rows by primary key, no rate limit", "wait 700ms for every obroute process",
		"rename orders_202501 on hot to obroute_moved_orders_202501", "state: a new move, recorded in shard_migration"} {
		if !strings.Contains(text.String(), says) {
			t.Errorf("the plan does not say %q:\n%s", says, text.String())
		}
	}

	// Readers through obroute for the whole move, each read compared with the reference.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reads int
	var readErrs []string
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := queryText(db, across)
				if err == nil && !reflect.DeepEqual(got, ref) {
					err = fmt.Errorf("%d rows, want %d", len(got), len(ref))
				}
				mu.Lock()
				reads++
				if err != nil {
					readErrs = append(readErrs, err.Error())
				}
				mu.Unlock()
			}
		}()
	}
	refresh := time.NewTicker(100 * time.Millisecond) // the readers' process refreshes often
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-refresh.C:
				_ = conn.RefreshMetadata(ctx)
			}
		}
	}()

	var steps []tiering.Step
	var guardErr error
	opts.Observer = func(e tiering.MoveEvent) {
		if e.Text != "" && (len(steps) == 0 || steps[len(steps)-1] != e.Step) {
			steps = append(steps, e.Step)
		}
		if e.Step == tiering.StepCopy && guardErr == nil && e.Done > 0 {
			_, guardErr = st.hot.DB.Exec("UPDATE orders_202501 SET note = 'changed' WHERE id = 1001")
			if guardErr == nil {
				guardErr = errors.New("the UPDATE succeeded")
			}
		}
	}
	plan, err = st.s.Move(ctx, "orders_202501", opts)
	close(stop)
	refresh.Stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(steps, []tiering.Step{"guard", "create", "copy", "check", "flip", "wait", "fence", "delete", "drop"}) {
		t.Errorf("steps %v", steps)
	}
	if guardErr == nil || !strings.Contains(guardErr.Error(), "orders_202501 is read-only: obroute migrate is moving it to cold") {
		t.Errorf("a write during the copy: %v; want the guard's refusal", guardErr)
	}
	t.Logf("%d reads during the move, %d failed or wrong", reads, len(readErrs))
	if len(readErrs) > 0 || reads < 4 {
		t.Errorf("%d of %d reads through obroute failed or differed during the move; first: %v", len(readErrs), reads, readErrs[:min(1, len(readErrs))])
	}
	if plan.Copied != 2500 || plan.Deleted != 2500 || plan.Resume != tiering.StepDone {
		t.Errorf("plan after the move: %+v", plan)
	}
	if got := rowsOf(t, st.cold.DB, "orders_202501", "id"); !reflect.DeepEqual(got, want) {
		t.Errorf("cold holds %d rows that differ from the %d hot had", len(got), len(want))
	}
	for _, gone := range []string{"orders_202501", "obroute_moved_orders_202501"} {
		if ok, err := tableOn(st, gone); ok || err != nil {
			t.Errorf("%s is still on hot (%v)", gone, err)
		}
	}
	var loc string
	var hot int
	if err := st.hot.DB.QueryRow("SELECT location, is_hot FROM shard_metadata WHERE table_name = 'orders_202501'").Scan(&loc, &hot); err != nil || loc != "cold" || hot != 0 {
		t.Errorf("metadata after the move: location %q is_hot %d (%v)", loc, hot, err)
	}
	if r, err := st.s.Verify(ctx, now); err != nil || !r.OK() || len(r.Findings) != 0 {
		t.Errorf("verify after the move: %+v %v", r, err)
	}
	if got := scanText(t, db, across); !reflect.DeepEqual(got, ref) {
		t.Errorf("after the move obroute reads %d rows, want the %d of before", len(got), len(ref))
	}
	again, err := st.s.Move(ctx, "orders_202501", opts)
	if err != nil || again.Resume != tiering.StepDone {
		t.Errorf("second move: %+v, %v; want done at once", again, err)
	}
	// The move's lock is released when Move returns (closing its *sql.Conn alone would leave it
	// held by a pooled connection, and DDL through obroute refused).
	var schema string
	var holder sql.NullInt64
	if err := st.hot.DB.QueryRow("SELECT DATABASE()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if err := st.hot.DB.QueryRow("SELECT IS_USED_LOCK(?)", metadata.MoveLockName(schema, "orders_202501")).Scan(&holder); err != nil || holder.Valid {
		t.Errorf("the move's lock is still held after Move returned (connection %d, %v)", holder.Int64, err)
	}
}

// TestMoveRefusals: tables in the hot window, already on the target, not in the metadata or
// without a primary key are not moved; a move in progress elsewhere is not started twice.
func TestMoveRefusals(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, moveMonths()...)
	opts := tiering.MoveOptions{Now: at(t, moveNow), Settle: time.Millisecond}
	st.hot.Exec(t, "CREATE TABLE orders_202409 (order_time DATETIME NOT NULL)")
	st.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES ('orders_202409', '2024-09-01', '2024-09-30 23:59:59', 0, 'hot')")
	for table, says := range map[string]string{
		"orders_202502": "orders_202502 is in the hot window of orders (its max_time 2025-02-28 23:59:59 is not before the window's start 2025-02-01 00:00:00)",
		"orders_202412": "the shard metadata already places orders_202412 on cold",
		"orders_202312": "orders_202312 is not in the shard metadata",
		"orders_202409": "orders_202409 has no primary key",
	} {
		if _, err := st.s.Move(ctx, table, opts); !errors.Is(err, tiering.ErrNotMovable) || !strings.Contains(err.Error(), says) {
			t.Errorf("move %s: %v; want ErrNotMovable saying %q", table, err, says)
		}
	}
	// A second move of a table while one runs.
	loadJanuary(t, st.hot, 100)
	var second error
	opts.ChunkRows, opts.RowsPerSecond = 10, -1
	opts.Observer = func(e tiering.MoveEvent) {
		if e.Step == tiering.StepCopy && second == nil {
			_, second = st.s.Move(ctx, "orders_202501", tiering.MoveOptions{Now: opts.Now})
		}
	}
	if _, err := st.s.Move(ctx, "orders_202501", opts); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(second, tiering.ErrMoveInProgress) {
		t.Errorf("a move of a table during its move: %v; want ErrMoveInProgress", second)
	}
}

// TestMoveAbort: a move stopped during the copy is undone by AbortMove before the switch: the
// copy is dropped, the table writable again, the move forgotten.
func TestMoveAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := newStore(t, moveMonths()...)
	loadJanuary(t, st.hot, 1000)
	opts := tiering.MoveOptions{ChunkRows: 100, RowsPerSecond: -1, Now: at(t, moveNow), Observer: func(e tiering.MoveEvent) {
		if e.Step == tiering.StepCopy && e.Done >= 300 {
			cancel()
		}
	}}
	if _, err := st.s.Move(ctx, "orders_202501", opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("move cancelled during the copy: %v", err)
	}
	plan, err := st.s.PlanMove(context.Background(), "orders_202501", tiering.MoveOptions{Now: opts.Now})
	if err != nil || plan.Resume != tiering.StepCopy || plan.Copied == 0 || plan.Copied >= 1000 {
		t.Fatalf("plan after the stop: %+v, %v; want it to resume the copy", plan, err)
	}
	if err := st.s.AbortMove(context.Background(), "orders_202501"); err != nil {
		t.Fatal(err)
	}
	st.hot.Exec(t, "UPDATE orders_202501 SET note = 'writable' WHERE id = 1001")
	var n int
	if err := st.cold.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders_202501'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the copy on cold is still there (%d, %v)", n, err)
	}
	if plan, err := st.s.PlanMove(context.Background(), "orders_202501", tiering.MoveOptions{Now: opts.Now}); err != nil || plan.Resume != "" {
		t.Errorf("plan after the abort: %+v, %v; want a new move", plan, err)
	}
}

// TestMoveTypes: every column type arrives exact (floats, BIT, BLOB with NUL bytes, JSON,
// unsigned BIGINT, TIME, TIMESTAMP, case-distinct text keys), with a composite primary key and
// a generated column, and chunks that split rows of one first key column.
func TestMoveTypes(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, moveMonths()...)
	st.hot.Exec(t, `CREATE TABLE events_202501 (
  k VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL,
  n INT NOT NULL,
  at DATETIME NOT NULL,
  f FLOAT NULL, d DOUBLE NULL, b BIT(10) NULL, bl BLOB NULL, j JSON NULL, e ENUM('a','b') NULL,
  u BIGINT UNSIGNED NULL, tm TIME(2) NULL, ts TIMESTAMP(3) NULL, l VARCHAR(10) CHARACTER SET latin1 NULL,
  g INT AS (n * 2) VIRTUAL,
  PRIMARY KEY (k, n), KEY (at))`)
	for i := range 120 {
		k := []string{"a", "B", "c", "é", "Z"}[i%5]
		st.hot.Exec(t, `INSERT INTO events_202501 (k, n, at, f, d, b, bl, j, e, u, tm, ts, l) VALUES (?, ?, ?, ?, ?, b'1010101010', ?, '{"x": [1, 2.5, "ü"]}', 'b', 18446744073709551615, '-838:59:59.99', '2025-01-02 03:04:05.678', 'Ünï')`,
			k, i, "2025-01-10 10:00:00", float32(i)*0.1+1e-7, 0.1+0.2*float64(i), []byte{0, byte(i), 0xff, 0})
	}
	st.hot.Exec(t, "INSERT INTO events_202501 (k, n, at) VALUES ('nulls', 1, '2025-01-11')")
	st.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES ('events_202501', '2025-01-01', '2025-01-31 23:59:59', 0, 'hot')")
	st.cfg.TimeTables = append(st.cfg.TimeTables, config.TimeTable{Table: "events", ShardKey: "at", HotWindow: config.HotWindow{Months: 1}})
	s, err := tiering.Open(st.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := rowsOf(t, st.hot.DB, "events_202501", "k, n")
	if _, err := s.Move(ctx, "events_202501", tiering.MoveOptions{ChunkRows: 7, RowsPerSecond: -1, Settle: time.Millisecond, Now: at(t, moveNow)}); err != nil {
		t.Fatal(err)
	}
	got := rowsOf(t, st.cold.DB, "events_202501", "k, n")
	if len(got) != 121 || !reflect.DeepEqual(got, want) {
		t.Errorf("cold holds %d rows, want the %d of hot, equal:\n got %v\nwant %v", len(got), len(want), got[:min(2, len(got))], want[:2])
	}
}

// scanText runs q and returns its rows as text, failing the test on error.
func scanText(t testing.TB, db *sql.DB, q string) [][]string {
	t.Helper()
	out, err := queryText(db, q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func queryText(db *sql.DB, q string) ([][]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := rowscan.Targets(vals)
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make([]string, len(cols))
		for i, v := range vals {
			r[i] = "NULL"
			if v.Valid {
				r[i] = v.String
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TestMoveWithoutLocationColumn: with the original schema (no location column) tables are
// placed by is_hot; a move to the first cold backend flips is_hot with the route.
func TestMoveWithoutLocationColumn(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, moveMonths()...)
	loadJanuary(t, st.hot, 200)
	st.hot.Exec(t, "ALTER TABLE shard_metadata DROP COLUMN location")
	if _, err := st.s.Move(ctx, "orders_202501", tiering.MoveOptions{RowsPerSecond: -1, Settle: time.Millisecond, Now: at(t, moveNow)}); err != nil {
		t.Fatal(err)
	}
	var hot int
	if err := st.hot.DB.QueryRow("SELECT is_hot FROM shard_metadata WHERE table_name = 'orders_202501'").Scan(&hot); err != nil || hot != 0 || count(t, st.cold, "orders_202501") != 200 {
		t.Errorf("after the move: is_hot %d (%v), %d rows on cold; want 0 and 200", hot, err, count(t, st.cold, "orders_202501"))
	}
	if r, err := st.s.Verify(ctx, at(t, moveNow)); err != nil || !r.OK() {
		t.Errorf("verify: %+v %v", r, err)
	}
}

// TestMoveWaitsForLongStatements: a transaction reading the table holds its metadata lock; the
// guard's CREATE TRIGGER gives up waiting after two seconds (so readers do not queue behind it
// for long), says so and retries until the transaction ends.
func TestMoveWaitsForLongStatements(t *testing.T) {
	ctx := context.Background()
	st := newStore(t, moveMonths()...)
	loadJanuary(t, st.hot, 100)
	tx, err := st.hot.DB.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT COUNT(*) FROM orders_202501"); err != nil {
		t.Fatal(err)
	}
	var retried atomic.Bool
	opts := tiering.MoveOptions{RowsPerSecond: -1, Settle: time.Millisecond, Now: at(t, moveNow), Observer: func(e tiering.MoveEvent) {
		if strings.Contains(e.Text, "orders_202501 is in use by a long statement on hot; retrying") && !retried.Swap(true) {
			go func() { time.Sleep(500 * time.Millisecond); tx.Commit() }()
		}
	}}
	if _, err := st.s.Move(ctx, "orders_202501", opts); err != nil {
		t.Fatal(err)
	}
	if !retried.Load() {
		t.Error("the move never said it waited for the transaction")
	}
}
