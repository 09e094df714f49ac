package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// commitCutter forwards TCP connections to a server. Once armed, the answer to the next COMMIT
// a client sends is dropped and that connection closed: the server has committed, the client
// never hears of it (a COMMIT "sent but not answered").
type commitCutter struct {
	ln    net.Listener
	armed atomic.Bool
	cuts  atomic.Int64
}

func newCommitCutter(t *testing.T, target string) *commitCutter {
	t.Helper()
	p := &commitCutter{}
	p.ln = newTCPProxy(t, target, func(c, up net.Conn) {
		var commitSent atomic.Bool
		go func() { // client → server, packet by packet
			defer up.Close()
			head := make([]byte, 4)
			for {
				if _, err := io.ReadFull(c, head); err != nil {
					return
				}
				body := make([]byte, int(head[0])|int(head[1])<<8|int(head[2])<<16)
				if _, err := io.ReadFull(c, body); err != nil {
					return
				}
				if len(body) > 1 && body[0] == 0x03 && isCommit(body[1:]) && p.armed.CompareAndSwap(true, false) {
					commitSent.Store(true)
				}
				if _, err := up.Write(append(head, body...)); err != nil {
					return
				}
			}
		}()
		// server → client; the answer to the armed COMMIT is dropped
		defer c.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 && commitSent.Load() {
				p.cuts.Add(1)
				up.Close()
				return
			}
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return p
}

func (p *commitCutter) addr() string { return p.ln.Addr().String() }

// withAddr returns dsn with its address replaced by addr.
func withAddr(t *testing.T, dsn, addr string) string {
	t.Helper()
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	mc.Addr = addr
	return mc.FormatDSN()
}

// openAt opens a handle on cfg with the shard metadata tables and the clock stopped at now; it is
// closed when the test ends.
func openAt(t *testing.T, cfg *config.Config, tables metadata.StaticSource, now time.Time) *sql.DB {
	t.Helper()
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

// monthTables creates orders_YYYYMM (id INT PRIMARY KEY, order_time DATETIME NOT NULL) for each
// month of months on b and returns their shard metadata rows, hot ones located on b's backend.
func monthTables(t *testing.T, b *sqltest.Backend, backend string, hot bool, months ...string) metadata.StaticSource {
	t.Helper()
	var tables metadata.StaticSource
	for _, m := range months {
		from, err := time.Parse("200601", m)
		if err != nil {
			t.Fatal(err)
		}
		name := "orders_" + m
		b.Exec(t, "CREATE TABLE "+name+" (id INT PRIMARY KEY, order_time DATETIME NOT NULL) ENGINE=InnoDB")
		tables = append(tables, metadata.Table{Name: name, Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: hot, Location: backend})
	}
	return tables
}

// A split INSERT runs its parts in a local transaction. When its COMMIT is sent and no answer
// comes, the error says the outcome is unknown (ErrCommitUnknown), as an application
// transaction's does, and names the parts; here the server had committed both. When a part fails,
// the error says that no part was written, and the server's error stays reachable: the rows are
// those one server would hold after the same multi-row INSERT (none).
func TestSplitWriteErrorsSayWhatCommitted(t *testing.T) {
	bs := sqltest.MariaDB(t, "hot", "ref")
	hot, ref := bs[0], bs[1]
	tables := monthTables(t, hot, "hot", true, "202502", "202503")
	ref.Exec(t, "CREATE TABLE orders (id INT PRIMARY KEY, order_time DATETIME NOT NULL) ENGINE=InnoDB")
	cutter := newCommitCutter(t, hot.Addr)
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: withAddr(t, hot.DSN, cutter.addr())}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	db := openAt(t, cfg, tables, time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()

	const insert = "INSERT INTO orders (id, order_time) VALUES (1, '2025-02-10 10:00:00'), (2, '2025-03-10 10:00:00')"
	cutter.armed.Store(true)
	_, err := db.ExecContext(ctx, insert)
	if cutter.cuts.Load() != 1 {
		t.Fatalf("the COMMIT of the split INSERT was not cut (%d cuts); the INSERT returned %v", cutter.cuts.Load(), err)
	}
	t.Logf("cut COMMIT: %v", err)
	if !errors.Is(err, connector.ErrCommitUnknown) {
		t.Fatalf("split INSERT whose COMMIT went unanswered: %v; want ErrCommitUnknown", err)
	}
	for _, name := range []string{"orders_202502", "orders_202503"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name the part %s: %v", name, err)
		}
	}
	for _, name := range []string{"orders_202502", "orders_202503"} {
		if n := count(t, hot, "SELECT COUNT(*) FROM "+name); n != 1 {
			t.Errorf("%s holds %d rows after the cut COMMIT, want 1 (the server committed)", name, n)
		}
	}

	// A part that fails: no part is written, as one server's multi-row INSERT writes no row.
	const dup = "INSERT INTO orders (id, order_time) VALUES (3, '2025-02-11 10:00:00'), (2, '2025-03-11 10:00:00')"
	ref.Exec(t, "INSERT INTO orders VALUES (1, '2025-02-10 10:00:00'), (2, '2025-03-10 10:00:00')")
	_, refErr := ref.DB.ExecContext(ctx, dup)
	_, err = db.ExecContext(ctx, dup)
	var me, refMe *mysql.MySQLError
	if !errors.As(refErr, &refMe) || !errors.As(err, &me) || me.Number != refMe.Number {
		t.Fatalf("split INSERT with a duplicate: %v; one server: %v; want the server's error %d", err, refErr, refMe.Number)
	}
	t.Logf("failed part: %v", err)
	if !strings.Contains(err.Error(), "no part was written") {
		t.Errorf("the error of a failed split INSERT does not say that no part was written: %v", err)
	}
	for _, name := range []string{"orders_202502", "orders_202503"} {
		if n := count(t, hot, "SELECT COUNT(*) FROM "+name); n != 1 {
			t.Errorf("%s holds %d rows after the failed INSERT, want 1", name, n)
		}
	}
	if n := count(t, ref, "SELECT COUNT(*) FROM orders"); n != 2 {
		t.Errorf("one server holds %d rows after the failed INSERT, want 2", n)
	}
	// The client session goes on.
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (id, order_time) VALUES (4, '2025-02-12 10:00:00'), (5, '2025-03-12 10:00:00')"); err != nil {
		t.Fatalf("split INSERT after the failures: %v", err)
	}
	ref.Exec(t, "INSERT INTO orders VALUES (4, '2025-02-12 10:00:00'), (5, '2025-03-12 10:00:00')")

	// Inside a transaction, a failed part undoes the statement only, as on one server: the
	// transaction goes on and commits its other writes.
	for _, h := range []*sql.DB{db, ref.DB} {
		tx, err := h.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, order_time) VALUES (6, '2025-03-13 10:00:00')"); err != nil {
			t.Fatal(err)
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO orders (id, order_time) VALUES (7, '2025-02-13 10:00:00'), (5, '2025-03-13 10:00:00')")
		if !errors.As(err, &me) || me.Number != refMe.Number {
			t.Fatalf("split INSERT with a duplicate in a transaction: %v; want the server's error %d", err, refMe.Number)
		}
		if h == db && !strings.Contains(err.Error(), "rolled back to the savepoint (the transaction goes on)") {
			t.Errorf("the error of a failed split INSERT in a transaction does not say the transaction goes on: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, name := range []string{"orders_202502", "orders_202503"} {
		got = append(got, rowsOf(t, hot.DB, "SELECT id, CAST(order_time AS CHAR) FROM "+name)...)
	}
	slices.Sort(got)
	if want := rowsOf(t, ref.DB, "SELECT id, CAST(order_time AS CHAR) FROM orders ORDER BY id"); !slices.Equal(got, want) {
		t.Errorf("orders holds %v, one server %v", got, want)
	}
}

// On a *sql.Conn, a split SELECT whose cold sub-query died in the middle of its rows fails; the
// next split SELECT on the same connection, once the server is back, runs on a new server
// session (as a single-backend statement is retried on one) and reads every row.
func TestSplitAfterASubQueryDiedMidStream(t *testing.T) {
	bs := sqltest.MariaDB(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	tables := append(monthTables(t, cold, "cold", false, "202412"), monthTables(t, hot, "hot", true, "202501")...)
	cold.Exec(t, "INSERT INTO orders_202412 SELECT seq, '2024-12-01' + INTERVAL (seq MOD 86400) SECOND FROM seq_1_to_200000")
	hot.Exec(t, "INSERT INTO orders_202501 VALUES (1, '2025-01-05 10:00:00'), (2, '2025-01-06 10:00:00')")
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "cold", Role: "cold", DSN: cold.DSN}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	db := openAt(t, cfg, tables, time.Date(2025, 2, 15, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Wide rows: far more than the sockets' buffers hold, so the cold sub-query is still sending
	// when its server dies.
	const split = "SELECT id, order_time, REPEAT('x', 200) FROM orders WHERE order_time >= '2024-12-01'"
	readAll := func(kill bool) (int, error) {
		rows, err := conn.QueryContext(ctx, split)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if n++; n == 10 && kill {
				cold.Kill(t)
			}
		}
		return n, rows.Err()
	}
	if n, err := readAll(false); err != nil || n != 200002 {
		t.Fatalf("split SELECT: %d rows, %v; want 200002", n, err)
	}
	if n, err := readAll(true); err == nil {
		t.Fatalf("split SELECT whose cold server was killed after 10 rows: %d rows and no error", n)
	}
	cold.Start(t)
	n, err := readAll(false)
	if err != nil || n != 200002 {
		t.Fatalf("split SELECT on the same *sql.Conn once the cold server is back: %d rows, %v; want 200002", n, err)
	}
	var hotN int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders WHERE order_time >= '2025-01-01'").Scan(&hotN); err != nil || hotN != 2 {
		t.Fatalf("hot-only statement on the same *sql.Conn: %d, %v; want 2", hotN, err)
	}
}

// A backend restarted with another global sql_mode: the facts obroute read at the first load (the
// sql_mode server sessions start with, the columns' precision, the default time zone) are read
// again with the first server session opened on the new server, so an INSERT of a fraction of a
// second goes where the server now stores it. Here the server truncated fractions before its
// restart and rounds them after it (TIME_ROUND_FRACTIONAL): '2026-11-30 23:59:59.7' becomes
// December's first second. A table on the same server holding every row is the reference.
func TestFactsReadAgainAfterTheServerChanged(t *testing.T) {
	const modes = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
	hot := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{"--sql-mode=" + modes + ",TIME_ROUND_FRACTIONAL"}}, "hot")[0]
	hot.Exec(t, "SET GLOBAL sql_mode = '"+modes+"'") // until the restart
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	hot.Exec(t, "CREATE TABLE visits_all (id INT PRIMARY KEY, at DATETIME NOT NULL)")
	for _, p := range []struct{ suffix, min, max string }{
		{"202611", "2026-11-01", "2026-11-30 23:59:59"},
		{"202612", "2026-12-01", "2026-12-31 23:59:59"},
	} {
		hot.Exec(t, "CREATE TABLE visits_"+p.suffix+" (id INT PRIMARY KEY, at DATETIME NOT NULL)")
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, 1)", "visits_"+p.suffix, p.min, p.max)
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}},
		TimeTables: []config.TimeTable{{Table: "visits", ShardKey: "at", HotWindow: config.HotWindow{Months: 2}}},
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	const last = "2026-11-30 23:59:59.7"
	insert := func(id int) {
		t.Helper()
		q := fmt.Sprintf("INSERT INTO visits (id, at) VALUES (%d, '%s')", id, last)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		// As a server session starting now would store it (the admin handle's may be older).
		hot.Exec(t, fmt.Sprintf("SET STATEMENT sql_mode = @@global.sql_mode FOR INSERT INTO visits_all (id, at) VALUES (%d, '%s')", id, last))
	}
	insert(1)
	// Server sessions of the old server, so that the new server's connection ids are lower.
	conns := make([]*sql.Conn, 20)
	for i := range conns {
		if conns[i], err = db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := conns[i].ExecContext(ctx, "/*+ OBROUTE(backend=hot) */ SELECT 1 FROM visits_202611 LIMIT 0"); err != nil {
			t.Fatal(err)
		}
	}
	for _, conn := range conns {
		conn.Close()
	}
	hot.Restart(t)
	insert(2)

	const read = "SELECT id, CAST(at AS CHAR) FROM %s WHERE at >= '2026-11-01' ORDER BY id"
	got, want := rowsOf(t, db, fmt.Sprintf(read, "visits")), rowsOf(t, hot.DB, fmt.Sprintf(read, "visits_all"))
	if !slices.Equal(got, want) {
		t.Errorf("through obroute %v, one table %v", got, want)
	}
	for table, month := range map[string]string{"visits_202611": "2026-11", "visits_202612": "2026-12"} {
		if misplaced := rowsOf(t, hot.DB, "SELECT id FROM "+table+" WHERE DATE_FORMAT(at, '%Y-%m') <> '"+month+"'"); len(misplaced) > 0 {
			t.Errorf("%s holds rows outside its span: ids %v", table, misplaced)
		}
	}
}

// records is a slog.Handler that passes each warning's message on, for a test waiting for one.
type records chan string

func (r records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r records) Handle(_ context.Context, rec slog.Record) error {
	select {
	case r <- rec.Level.String() + " " + rec.Message:
	default: // the test reads what it waits for; the rest may be dropped
	}
	return nil
}
func (r records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r records) WithGroup(string) slog.Handler      { return r }

// A background refresh of the shard metadata blocked on a metadata server that stopped answering
// says so within a few seconds (the load itself gives up after its 30 s timeout, when the
// failure is logged); statements meanwhile keep the last snapshot.
func TestStalledMetadataRefreshIsLogged(t *testing.T) {
	meta := sqltest.MariaDB(t, "meta")[0]
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, meta.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	meta.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES ('orders_202503', '2025-03-01', '2025-03-31 23:59:59', 1)")
	meta.Exec(t, "CREATE TABLE orders_202503 (id INT PRIMARY KEY, order_time DATETIME NOT NULL)")
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=" + meta.DSN + ";metadata.refresh=200ms;" +
		"time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2")
	if err != nil {
		t.Fatal(err)
	}
	logged := make(records, 64)
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithLogger(slog.New(logged)), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if n := rowCount(t, db, "SELECT id FROM orders WHERE order_time >= '2025-03-01'"); n != 0 {
		t.Fatalf("%d rows, want 0", n)
	}
	db.SetMaxIdleConns(0) // the statement below must not need the paused server
	meta.Pause(t)
	defer meta.Resume(t)
	paused := time.Now()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case msg := <-logged:
			if !strings.HasPrefix(msg, "WARN shard metadata load has not answered yet") {
				continue
			}
			t.Logf("%q %s after the pause", msg, time.Since(paused).Round(100*time.Millisecond))
			return
		case <-timer.C:
			t.Fatalf("no warning 10s after the metadata server stopped answering a refresh")
		}
	}
}

// Errors of opening a server session name the backend as well as the address when there are
// several backends; with a plain DSN they are go-sql-driver's own, as they are without obroute.
// A metadata table that does not exist is said to be created by CreateTable.
func TestConnectErrorsNameTheBackend(t *testing.T) {
	hot := sqltest.Shared(t, "hot")[0]
	closed := closedPort(t)
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+hot.DSN+";backends.cold.dsn=root@tcp("+closed+")/test;routes.audit_log=cold")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec("INSERT INTO audit_log (id) VALUES (1)")
	if err == nil || !strings.Contains(err.Error(), "backend cold ("+closed+")") {
		t.Errorf("statement for a backend nothing listens for: %v; want it to name backend cold and %s", err, closed)
	}
	plain := "root@tcp(" + closed + ")/test"
	var errs [2]error
	for i, name := range []string{"mysql", "obroute"} {
		pdb, err := sql.Open(name, plain)
		if err != nil {
			t.Fatal(err)
		}
		_, errs[i] = pdb.Exec("SELECT 1")
		pdb.Close()
	}
	if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() {
		t.Errorf("plain DSN to a closed port: obroute says %v, go-sql-driver %v; want the same", errs[1], errs[0])
	}

	mdb, err := sql.Open("obroute", "obroute:backends.hot.dsn="+hot.DSN+";time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2")
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	_, err = mdb.Exec("DELETE FROM orders WHERE order_time >= '2025-03-01'")
	if !errors.Is(err, connector.ErrMetadataUnavailable) || !strings.Contains(err.Error(), "it does not exist: CreateTable creates it") {
		t.Errorf("first statement without a metadata table: %v; want ErrMetadataUnavailable saying CreateTable creates it", err)
	}
}

// isCommit reports whether a COM_QUERY's text is a COMMIT: the word alone, or with its clauses
// (obroute's own commits say AND NO CHAIN NO RELEASE).
func isCommit(text []byte) bool {
	f := strings.Fields(string(text))
	return len(f) > 0 && strings.EqualFold(f[0], "COMMIT")
}
