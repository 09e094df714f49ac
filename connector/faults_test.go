package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
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
				if len(body) > 1 && body[0] == 0x03 && strings.EqualFold(strings.TrimSpace(string(body[1:])), "COMMIT") && p.armed.CompareAndSwap(true, false) {
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
