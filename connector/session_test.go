package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/obroute/obroute/connector"
	_ "github.com/obroute/obroute/driver"
	"github.com/obroute/obroute/sqltest"
)

// twoBackends starts hot and cold MariaDB instances and opens an obroute handle over them with
// table audit_log routed to cold.
func twoBackends(t *testing.T) (db *sql.DB, hot, cold *sqltest.Backend) {
	t.Helper()
	bs := sqltest.MariaDB(t, "hot", "cold")
	hot, cold = bs[0], bs[1]
	for _, b := range bs {
		b.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
	}
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold", hot.DSN, cold.DSN)
	db, err := sql.Open("obroute", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, hot, cold
}

func count(t *testing.T, b *sqltest.Backend, query string) int {
	t.Helper()
	var n int
	if err := b.DB.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTransactionPinnedToFirstStatementBackend(t *testing.T) {
	db, hot, cold := twoBackends(t)
	ctx := context.Background()
	for _, begin := range []string{"BeginTx", "BEGIN"} {
		t.Run(begin, func(t *testing.T) {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var q interface {
				ExecContext(context.Context, string, ...any) (sql.Result, error)
				QueryRowContext(context.Context, string, ...any) *sql.Row
			} = conn
			var tx *sql.Tx
			if begin == "BeginTx" {
				tx, err = conn.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				q = tx
			} else if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			base := map[string]int{"BeginTx": 0, "BEGIN": 100}[begin]
			// First statement routes to cold by the static route of audit_log.
			if _, err := q.ExecContext(ctx, "INSERT INTO audit_log VALUES (?, 'first')", base+1); err != nil {
				t.Fatal(err)
			}
			var port int
			if err := q.QueryRowContext(ctx, "SELECT @@port").Scan(&port); err != nil {
				t.Fatal(err)
			}
			if port != cold.Port {
				t.Fatalf("@@port inside the transaction = %d, want cold's %d (hot is %d)", port, cold.Port, hot.Port)
			}
			// items has no route: it lives on hot, and cold's table of that name is another
			// table. Inside the transaction bound to cold it is refused, not written on cold.
			if _, err := q.ExecContext(ctx, "INSERT INTO items VALUES (?, 'in tx')", base+2); !errors.Is(err, connector.ErrCrossBackendTx) {
				t.Fatalf("INSERT INTO items in a transaction bound to cold: %v, want ErrCrossBackendTx", err)
			}
			if tx != nil {
				err = tx.Commit()
			} else {
				_, err = conn.ExecContext(ctx, "COMMIT")
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := count(t, cold, fmt.Sprintf("SELECT COUNT(*) FROM audit_log WHERE id = %d", base+1)); n != 1 {
				t.Errorf("cold has %d rows of the transaction's audit_log insert, want 1", n)
			}
			if n := count(t, cold, "SELECT COUNT(*) FROM items"); n != 0 {
				t.Errorf("cold has %d rows in its items table, want 0: the refused INSERT ran", n)
			}
			if n := count(t, hot, "SELECT COUNT(*) FROM items") + count(t, hot, "SELECT COUNT(*) FROM audit_log"); n != 0 {
				t.Errorf("hot has %d rows, want 0: the transaction wrote outside its backend", n)
			}
			// After COMMIT, routing is free again: items goes to hot.
			if err := conn.QueryRowContext(ctx, "SELECT @@port FROM items LIMIT 1").Scan(&port); err != sql.ErrNoRows {
				t.Fatalf("query of hot's empty items table: err = %v, want sql.ErrNoRows", err)
			}
		})
	}
}

func TestRollbackLeavesNothing(t *testing.T) {
	db, hot, cold := twoBackends(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO audit_log VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, cold, "SELECT COUNT(*) FROM audit_log") + count(t, hot, "SELECT COUNT(*) FROM audit_log"); n != 0 {
		t.Fatalf("%d rows after rollback, want 0", n)
	}
}

func TestSessionVariablesFollowToNewBackend(t *testing.T) {
	db, hot, cold := twoBackends(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Touch hot first so the SET runs there, then reach cold for the first time.
	if _, err := conn.ExecContext(ctx, "SELECT 1 FROM items"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET time_zone = '+08:00', @marker = CONCAT('a', 'b')"); err != nil {
		t.Fatal(err)
	}
	var tz, marker string
	var port int
	if err := conn.QueryRowContext(ctx, "SELECT @@time_zone, @marker, @@port FROM audit_log UNION ALL SELECT @@time_zone, @marker, @@port").Scan(&tz, &marker, &port); err != nil {
		t.Fatal(err)
	}
	if port != cold.Port || tz != "+08:00" || marker != "ab" {
		t.Fatalf("on port %d (cold %d): time_zone=%q @marker=%q, want +08:00 and ab", port, cold.Port, tz, marker)
	}

	// 1000 statements alternating backends: each backend sees each SET replayed at most once.
	setsBefore := map[*sqltest.Backend]int64{hot: hot.StatusCounter(t, "Com_set_option"), cold: cold.StatusCounter(t, "Com_set_option")}
	const changes = 5
	for i := 0; i < 1000; i++ {
		if i%200 == 0 {
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET time_zone = '+0%d:00'", i/200)); err != nil {
				t.Fatal(err)
			}
		}
		q := "SELECT @@time_zone FROM items UNION ALL SELECT @@time_zone"
		if i%2 == 1 {
			q = "SELECT @@time_zone FROM audit_log UNION ALL SELECT @@time_zone"
		}
		if err := conn.QueryRowContext(ctx, q).Scan(&tz); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("+0%d:00", i/200); tz != want {
			t.Fatalf("statement %d: time_zone %q, want %q", i, tz, want)
		}
	}
	for b, before := range setsBefore {
		// Each change: the SET itself on one backend, one replay on the other.
		if got := b.StatusCounter(t, "Com_set_option") - before; got > changes {
			t.Errorf("backend %s executed %d SET statements for %d changes, want at most %d", b.Name, got, changes, changes)
		}
	}
}

func TestTemporaryTableStaysWithItsSession(t *testing.T) {
	db, _, cold := twoBackends(t)
	ctx := context.Background()
	owner, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Created on cold via a backend hint comment, found later without any hint.
	if _, err := owner.ExecContext(ctx, "/*+ OBROUTE(backend=cold) */ CREATE TEMPORARY TABLE scratch (v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.ExecContext(ctx, "INSERT INTO scratch VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	var v, port int
	if err := owner.QueryRowContext(ctx, "SELECT v, @@port FROM scratch").Scan(&v, &port); err != nil {
		t.Fatal(err)
	}
	if v != 7 || port != cold.Port {
		t.Fatalf("scratch: v=%d port=%d, want 7 on cold %d", v, port, cold.Port)
	}
	if err := other.QueryRowContext(ctx, "SELECT v FROM scratch").Scan(&v); err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("another session found the temporary table: err = %v", err)
	}
}

func TestLastStatementFunctionsFollowSession(t *testing.T) {
	db, _, cold := twoBackends(t)
	ctx := context.Background()
	conn, _ := db.Conn(ctx)
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "INSERT INTO audit_log VALUES (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	var n, port int
	if err := conn.QueryRowContext(ctx, "SELECT ROW_COUNT(), @@port").Scan(&n, &port); err != nil {
		t.Fatal(err)
	}
	if n != 3 || port != cold.Port {
		t.Fatalf("ROW_COUNT() = %d on port %d, want 3 on cold %d", n, port, cold.Port)
	}
}

func TestSQLX(t *testing.T) {
	_, hot, cold := twoBackends(t)
	db, err := sqlx.Open("obroute", fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold", hot.DSN, cold.DSN))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type entry struct {
		ID   int    `db:"id"`
		Note string `db:"note"`
	}
	if _, err := db.NamedExec("INSERT INTO audit_log (id, note) VALUES (:id, :note)", []entry{{1, "one"}, {2, "two"}}); err != nil {
		t.Fatal(err)
	}
	var got []entry
	if err := db.Select(&got, "SELECT id, note FROM audit_log ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != (entry{2, "two"}) {
		t.Fatalf("Select = %+v", got)
	}
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	var port int
	if err := tx.Get(&port, "SELECT @@port FROM audit_log LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	tx.MustExec("INSERT INTO audit_log VALUES (?, ?)", 9, "pinned")
	// items lives on hot: in the transaction bound to cold it is refused.
	if _, err := tx.Exec("INSERT INTO items VALUES (?, ?)", 9, "elsewhere"); !errors.Is(err, connector.ErrCrossBackendTx) {
		t.Fatalf("INSERT INTO items in a transaction bound to cold: %v, want ErrCrossBackendTx", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if port != cold.Port || count(t, cold, "SELECT COUNT(*) FROM audit_log") != 3 || count(t, cold, "SELECT COUNT(*) FROM items")+count(t, hot, "SELECT COUNT(*) FROM items") != 0 {
		t.Fatalf("sqlx transaction not pinned to cold (port %d)", port)
	}
	var e entry
	if err := db.Get(&e, "SELECT id, note FROM audit_log WHERE id = ?", 1); err != nil || e.Note != "one" {
		t.Fatalf("Get = %+v, %v", e, err)
	}
}

func TestConcurrentMixedWorkloadLeavesNoServerSessions(t *testing.T) {
	db, hot, cold := twoBackends(t)
	db.SetMaxOpenConns(64)
	hotBase, coldBase := hot.Connections(t), cold.Connections(t)
	const workers, perWorker = 64, 1000
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < perWorker; i++ {
				id := w*perWorker + i
				var err error
				switch rng.IntN(5) {
				case 0:
					_, err = db.Exec("INSERT INTO items VALUES (?, 'w')", id)
				case 1:
					_, err = db.Exec("INSERT INTO audit_log VALUES (?, 'w')", id)
				case 2:
					var n int
					err = db.QueryRow("SELECT COUNT(*) FROM items").Scan(&n)
				case 3:
					var tx *sql.Tx
					if tx, err = db.Begin(); err == nil {
						if _, err = tx.Exec("INSERT INTO audit_log VALUES (?, 'tx')", id); err == nil {
							_, err = tx.Exec("UPDATE audit_log SET note = 'tx' WHERE id = ?", id-1)
						}
						if err == nil {
							err = tx.Commit()
						} else {
							tx.Rollback()
						}
					}
				case 4:
					_, err = db.Exec(fmt.Sprintf("SET @w = %d", w))
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d statement %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := count(t, hot, "SELECT COUNT(*) FROM audit_log"); n != 0 {
		t.Errorf("hot has %d audit_log rows; every one belongs on cold", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The servers notice closed connections asynchronously: allow them a moment.
	deadline := time.Now().Add(3 * time.Second)
	for {
		h, c := hot.Connections(t)-hotBase, cold.Connections(t)-coldBase
		if h <= 0 && c <= 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after db.Close: %d server sessions left on hot, %d on cold", h, c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// EXPLAIN ROUTE sent with Exec runs nothing and returns a result without rows.
func TestExplainRouteThroughExec(t *testing.T) {
	b := sqltest.Embedded(t, "hot")[0]
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec("EXPLAIN ROUTE CREATE TABLE never_created (a INT)")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 0 {
		t.Fatalf("RowsAffected = %d, %v; want 0", n, err)
	}
	if _, err := db.Exec("SELECT * FROM never_created"); err == nil {
		t.Fatal("EXPLAIN ROUTE ran the explained statement")
	}
}
