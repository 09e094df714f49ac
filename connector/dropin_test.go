package connector_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// A plain DSN gets go-sql-driver's defaults: no read timeout of obroute's own, so a statement
// silent for 32 s succeeds through obroute as it does through go-sql-driver.
func TestPlainDSNKeepsGoSQLDriverDefaults(t *testing.T) {
	b := sqltest.Shared(t, "sleep")[0]
	for _, name := range []string{"mysql", "obroute"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, err := sql.Open(name, b.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var slept int
			if err := db.QueryRow("SELECT SLEEP(32)").Scan(&slept); err != nil || slept != 0 {
				t.Fatalf("SELECT SLEEP(32) through %s: %d, %v; want 0, nil", name, slept, err)
			}
		})
	}
}

// A statement that outlives its own read timeout fails with go-sql-driver's error, and that
// is the statement's failure, never the backend's: with health marking at its most eager
// (down_after=1), three such statements at once leave the backend up and the next statement
// succeeds, and each of them is killed on the server.
func TestStatementTimeoutIsNotABackendFailure(t *testing.T) {
	b := sqltest.Shared(t, "slow")[0]
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=" + b.DSN + ";timeouts.read=1s;health.down_after=1")
	if err != nil {
		t.Fatal(err)
	}
	kills := make(killOutcomes, 16)
	c, err := connector.New(cfg, connector.WithObserver(kills))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Longer than the test: a statement that ended by itself could not be killed.
			_, errs[i] = db.Exec("SELECT SLEEP(30.7)")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, mysql.ErrInvalidConn) {
			t.Errorf("statement %d past its read timeout: %v, want go-sql-driver's %v", i, err, mysql.ErrInvalidConn)
		}
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 after three statement timeouts: %d, %v; want 1", one, err)
	}
	s := c.Stats()
	if s.BackendsDown != 0 || s.Backends[0].Down || s.Backends[0].Failures != 0 {
		t.Fatalf("statement timeouts counted against the backend: %+v", s)
	}
	// Each abandoned statement gets one KILL QUERY. It kills the statement, or finds its
	// connection gone (error 1094): the server may end a statement whose connection go-sql-driver
	// closed before the KILL arrives. Either way nothing of them runs on the server afterwards.
	for i := range errs {
		select {
		case ev := <-kills:
			if ev.Kind == connector.StateKillFailed && !strings.Contains(ev.Message+fmt.Sprint(ev.Attrs), "1094") {
				t.Errorf("KILL QUERY of abandoned statement %d failed: %v", i, ev.Attrs)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%d of 3 abandoned statements got a KILL QUERY within 15 s", i)
		}
	}
	running := "INFO LIKE '%SLEEP(30.7)%' AND INFO NOT LIKE '%PROCESSLIST%'"
	deadline := time.Now().Add(15 * time.Second)
	for len(processIDs(t, b, running)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("abandoned statements still run on the server 15 s after their KILL QUERY")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One KILL QUERY each, not more.
	select {
	case ev := <-kills:
		t.Errorf("a fourth KILL QUERY outcome for three abandoned statements: %v %v", ev.Kind, ev.Attrs)
	case <-time.After(time.Second):
	}
	if k := c.Stats().QueriesKilled; k > 3 {
		t.Errorf("QueriesKilled = %d, want at most 3 (one KILL QUERY per abandoned statement)", k)
	}
}

// silentListener accepts connections and never answers; it counts them.
func silentListener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String(), accepted
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// sql.Open with time-sharded tables connects to nothing; the shard metadata is loaded by the
// first statement that names a time-sharded table, within that statement's deadline, and a
// failed first load says so clearly.
func TestOpenDoesNoIOAndMetadataLoadsWithTheStatement(t *testing.T) {
	hot := sqltest.Shared(t, "hot")[0]
	silent, accepted := silentListener(t)
	for _, tc := range []struct {
		name, addr string
		cause      error // what the first load's error wraps besides ErrMetadataUnavailable
	}{
		{"listener that never answers", silent, context.DeadlineExceeded},
		{"closed port", closedPort(t), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := "obroute:backends.hot.dsn=" + hot.DSN + ";backends.meta.dsn=root@tcp(" + tc.addr + ")/test;backends.meta.role=meta;" +
				"metadata.backend=meta;time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.days=30"
			before := accepted.Load()
			start := time.Now()
			db, err := sql.Open("obroute", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			c, err := connector.FromDB(db)
			if err != nil {
				t.Fatal(err)
			}
			opened := time.Since(start)
			// A statement that names no time-sharded table needs no metadata.
			var one int
			if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
				t.Fatal(err)
			}
			if n := accepted.Load() - before; n != 0 {
				t.Fatalf("sql.Open and SELECT 1 opened %d connections to the metadata backend, want 0", n)
			}
			const wait = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			start = time.Now()
			_, err = db.QueryContext(ctx, "SELECT id FROM orders WHERE order_time >= ?", time.Now().Add(-time.Hour))
			took := time.Since(start)
			t.Logf("sql.Open %s; first statement failed after %s: %v", opened, took, err)
			if !errors.Is(err, connector.ErrMetadataUnavailable) {
				t.Fatalf("first statement on orders: %v, want ErrMetadataUnavailable", err)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
			if msg := err.Error(); strings.Contains(msg, "keeping the last snapshot") || !strings.Contains(msg, "meta.shard_metadata") || !strings.Contains(msg, "first time") {
				t.Errorf("error %q: want it to name meta.shard_metadata and the first load, without speaking of a last snapshot", msg)
			}
			// The table was never asked for: nothing says it does not exist.
			if msg := err.Error(); strings.Contains(msg, "CreateTable") {
				t.Errorf("error %q speaks of creating the table, which the server never said is missing", msg)
			}
			if msg := err.Error(); tc.cause == nil && !strings.Contains(msg, "backend meta ("+tc.addr+")") {
				t.Errorf("error %q: want the dial error to name backend meta and its address %s", msg, tc.addr)
			}
			if took > wait+time.Second {
				t.Errorf("the first statement waited %s, beyond its %s deadline", took, wait)
			}
			if tc.addr == silent && accepted.Load() == before {
				t.Errorf("the first statement never tried the metadata backend")
			}
			// EXPLAIN ROUTE of the statement says the same, and Stats work without metadata.
			if _, err := c.Explain(ctx, "SELECT id FROM orders WHERE order_time >= '2025-01-01'"); !errors.Is(err, connector.ErrMetadataUnavailable) {
				t.Errorf("Explain: %v, want ErrMetadataUnavailable", err)
			}
		})
	}
}

// db.Prepare returns the server's error at Prepare time, as go-sql-driver does, prepared on
// the backend where the statement routes.
func TestPrepareErrorsAtPrepare(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	cold.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(20))")
	plain, err := sql.Open("mysql", hot.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, tc := range []struct{ name, dsn string }{
		{"plain DSN", hot.DSN},
		{"obroute DSN", "obroute:backends.hot.dsn=" + hot.DSN + ";backends.cold.dsn=" + cold.DSN + ";routes.audit_log=cold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("obroute", tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, query := range []string{"invalid sql", "SELECT * FROM no_such_table WHERE id = ?", "SELECT 1 FROM DUAL WHERE"} {
				_, perr := plain.Prepare(query)
				_, oerr := db.Prepare(query)
				var pme, ome *mysql.MySQLError
				if !errors.As(perr, &pme) || !errors.As(oerr, &ome) || pme.Number != ome.Number {
					t.Errorf("Prepare(%q): obroute %v, mysql %v; want the same *mysql.MySQLError", query, oerr, perr)
				}
			}
		})
	}
	// audit_log lives on cold: the statement is prepared there (hot has no such table, which
	// would be error 1146), and the server's answer about the column comes back.
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+hot.DSN+";backends.cold.dsn="+cold.DSN+";routes.audit_log=cold")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var me *mysql.MySQLError
	if _, err := db.Prepare("SELECT nope FROM audit_log WHERE id = ?"); !errors.As(err, &me) || me.Number != 1054 {
		t.Fatalf("Prepare on a table routed to cold: %v, want cold's error 1054 (unknown column)", err)
	}
	st, err := db.Prepare("INSERT INTO audit_log (id, note) VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Exec(1, "one"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cold.DB.QueryRow("SELECT COUNT(*) FROM audit_log").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows on cold: %d, %v; want 1", n, err)
	}
}

// No configured password appears in what the connector logs, in EXPLAIN ROUTE or in errors of
// New, even when a statement or an error quotes it.
func TestConnectorScrubsPasswords(t *testing.T) {
	const pw = "Zq9x%PW-s3cret"
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr := closedPort(t)
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=app:" + pw + "@tcp(" + addr + ")/test;timeouts.connect=1s;health.down_after=1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg, connector.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	rows, err := db.Query("EXPLAIN ROUTE SELECT '" + pw + "' AS quoted, 'app:" + pw + "@tcp(h:1)/d' AS dsn")
	if err != nil {
		t.Fatal(err)
	}
	var explained strings.Builder
	for rows.Next() {
		var section, step, detail string
		if err := rows.Scan(&section, &step, &detail); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&explained, section, step, detail)
	}
	rows.Close()
	_, err1 := db.Exec("SELECT '" + pw + "'") // refused connection: logged, then the backend goes down
	_, err2 := db.Exec("SELECT 1")            // ErrBackendDown quoting the last failure
	bad := &config.Config{Backends: []config.Backend{
		{Name: "hot", Role: "hot", DSN: "app:" + pw + "@tcp(h:1)/d"},
		{Name: "cold", Role: "cold", DSN: "app:" + pw + "@tcp(h:2)/d?autocommit=0"},
	}}
	_, err3 := connector.New(bad)
	for what, text := range map[string]string{
		"log": logged.String(), "EXPLAIN ROUTE": explained.String(),
		"statement error": fmt.Sprint(err1), "down error": fmt.Sprint(err2), "New error": fmt.Sprint(err3),
	} {
		if strings.Contains(text, pw) {
			t.Errorf("%s shows the password:\n%s", what, text)
		}
	}
	if !strings.Contains(explained.String(), "SQL_PARSE") || logged.Len() == 0 || !errors.Is(err2, connector.ErrBackendDown) || err3 == nil {
		t.Fatalf("the test did not produce what it checks: explain %q, log %d bytes, errors %v / %v", explained.String(), logged.Len(), err2, err3)
	}
}
