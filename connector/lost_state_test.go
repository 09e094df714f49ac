package connector_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// oneBackend opens obroute over one MariaDB instance with table items holding ids 1..3.
func oneBackend(t *testing.T, params string) (*sql.DB, *sqltest.Backend) {
	t.Helper()
	b := sqltest.MariaDB(t, "hot")[0]
	b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
	b.Exec(t, "INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	db, err := sql.Open("obroute", b.DSN+params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, b
}

// A transaction whose server session was dropped (here by a cancelled row stream) is lost: the
// next statement must not quietly start a new transaction on a new server session.
func TestTransactionNeverContinuesOnANewServerSession(t *testing.T) {
	db, b := oneBackend(t, "")
	bg := context.Background()
	tx, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(bg, "INSERT INTO items VALUES (10, 'first')"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	rows, err := tx.QueryContext(ctx, "SELECT a.id FROM items a, items b, items c, items d, items e, items f, items g")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	cancel()
	rows.Close()
	// Every later statement of the transaction, and its COMMIT, fail: nothing may run in
	// autocommit while the application believes it is inside its transaction.
	for _, q := range []string{"INSERT INTO items VALUES (11, 'second')", "INSERT INTO items VALUES (12, 'third')"} {
		if _, err := tx.ExecContext(bg, q); !errors.Is(err, connector.ErrTxBackendLost) {
			t.Fatalf("%s after the transaction's server session was dropped: err = %v, want ErrTxBackendLost", q, err)
		}
	}
	if err := tx.Commit(); !errors.Is(err, connector.ErrTxBackendLost) {
		t.Fatalf("COMMIT of the lost transaction: err = %v, want ErrTxBackendLost", err)
	}
	if n := count(t, b, "SELECT COUNT(*) FROM items WHERE id >= 10"); n != 0 {
		t.Fatalf("%d rows of the lost transaction were committed", n)
	}
	// The client session goes on with the next transaction.
	if _, err := db.Exec("INSERT INTO items VALUES (13, 'after')"); err != nil {
		t.Fatal(err)
	}
}

// COMMIT is sent even when obroute did not see the transaction start (autocommit=0 in the DSN,
// or set from an expression).
func TestCommitReachesTheServer(t *testing.T) {
	for _, tc := range []struct{ name, params, set string }{
		{"autocommit=0 in the DSN", "&autocommit=0", ""},
		{"autocommit set from a variable", "", "SET @v = 0; SET autocommit = @v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, b := oneBackend(t, tc.params)
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tc.set != "" {
				for _, q := range []string{"SET @v = 0", "SET autocommit = @v"} {
					if _, err := conn.ExecContext(context.Background(), q); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := conn.ExecContext(context.Background(), "INSERT INTO items VALUES (20, 'x')"); err != nil {
				t.Fatal(err)
			}
			if n := count(t, b, "SELECT COUNT(*) FROM items WHERE id = 20"); n != 0 {
				t.Fatal("the insert was visible before COMMIT: autocommit was not off")
			}
			if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
				t.Fatal(err)
			}
			if n := count(t, b, "SELECT COUNT(*) FROM items WHERE id = 20"); n != 1 {
				t.Fatal("COMMIT did not reach the server: the insert is not visible")
			}
		})
	}
}

// A temporary table lost with its server session is an error, never a silent switch to the
// permanent table of the same name.
func TestLostTemporaryTableIsNotReplacedByThePermanentOne(t *testing.T) {
	db, b := oneBackend(t, "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE items (id INT)"); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID() FROM items UNION ALL SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, fmt.Sprintf("KILL CONNECTION %d", id))
	_, err = conn.ExecContext(ctx, "DELETE FROM items")
	if !errors.Is(err, connector.ErrTempTablesLost) {
		t.Fatalf("DELETE after the temporary table's session died: err = %v, want ErrTempTablesLost", err)
	}
	if n := count(t, b, "SELECT COUNT(*) FROM items"); n != 3 {
		t.Fatalf("the permanent items table has %d rows, want its 3", n)
	}
	// The client session goes on; items is the permanent table again.
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM items").Scan(&id); err != nil || id != 3 {
		t.Fatalf("next statement: %d rows, %v", id, err)
	}
}

// Statement sequences around transactions behave as on one server: each statement gets the
// same outcome through obroute as through plain go-sql-driver.
func TestTransactionScriptsAsOnOneServer(t *testing.T) {
	db, b := oneBackend(t, "")
	plain, err := sql.Open("mysql", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	scripts := map[string][]string{
		"SET TRANSACTION before statements": {"SET TRANSACTION READ ONLY", "INSERT INTO items VALUES (30, 'x')", "SELECT 1",
			"BEGIN", "INSERT INTO items VALUES (31, 'x')", "ROLLBACK", "INSERT INTO items VALUES (32, 'x')"},
		"SET TRANSACTION inside a transaction": {"BEGIN", "INSERT INTO items VALUES (50, 'x')", "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
			"INSERT INTO items VALUES (51, 'x')", "INSERT INTO items VALUES (52, 'x')", "COMMIT", "SELECT COUNT(*) FROM items WHERE id >= 50"},
		"failed first statement under autocommit=0": {"SET autocommit = 0", "UPDATE items SET id = 2 WHERE id = 1", "INSERT INTO items VALUES (60, 'x')",
			"COMMIT", "SET autocommit = 1", "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()"},
	}
	outcomes := func(db *sql.DB, script []string) []string {
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var out []string
		for _, q := range script {
			var n int
			err := conn.QueryRowContext(context.Background(), q).Scan(&n)
			var me *mysql.MySQLError
			switch {
			case err == nil:
				out = append(out, fmt.Sprint("row ", n))
			case errors.Is(err, sql.ErrNoRows):
				out = append(out, "ok")
			case errors.As(err, &me):
				out = append(out, fmt.Sprint(me.Number))
			default:
				t.Fatalf("%s: %v", q, err)
			}
		}
		b.Exec(t, "DELETE FROM items WHERE id > 3")
		return out
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			want, got := outcomes(plain, script), outcomes(db, script)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("outcomes through obroute %v, through go-sql-driver %v", got, want)
			}
			t.Logf("%v", want)
		})
	}
}

// BeginTx's isolation level and read-only option are applied on the backend the transaction
// binds to.
func TestTxOptionsHonoured(t *testing.T) {
	db, _ := oneBackend(t, "")
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO items VALUES (40, 'rc')"); err != nil {
		t.Fatal(err)
	}
	var level string
	if err := tx.QueryRow("SELECT trx_isolation_level FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()").Scan(&level); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if level != "READ COMMITTED" {
		t.Fatalf("isolation inside the transaction = %q, want READ COMMITTED", level)
	}
	tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = tx.Exec("INSERT INTO items VALUES (41, 'ro')")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1792 {
		t.Fatalf("write in a read-only transaction: err = %v, want MySQL error 1792", err)
	}
	if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSnapshot}); err == nil {
		t.Fatal("BeginTx with an isolation level MySQL does not have succeeded")
	}
}

// A context cancelled in the middle of a transaction's statement leaves the same state through
// obroute as through go-sql-driver (its TestContextCancelBegin): the statement returns
// context.Canceled itself, the transaction is over, the connection answers driver.ErrBadConn
// to the next BeginTx, and closing it does not hang.
func TestContextCancelInTransactionAsGoSQLDriver(t *testing.T) {
	b := sqltest.Shared(t, "cancel")[0]
	b.Exec(t, "CREATE TABLE items (v INT)")
	for _, name := range []string{"mysql", "obroute"} {
		t.Run(name, func(t *testing.T) {
			db, err := sql.Open(name, b.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			if _, err := tx.ExecContext(ctx, "INSERT INTO items VALUES (SLEEP(1))"); err != context.Canceled {
				t.Errorf("cancelled statement: err = %v, want context.Canceled itself", err)
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("the cancelled statement returned after %s", d)
			}
			// The driver sees ctx done before the context package has cancelled the transaction's
			// child context; cancel waits for a cancel in progress to finish, so Commit then finds
			// the transaction's context done, whichever driver answered first.
			cancel()
			if err := tx.Commit(); err != sql.ErrTxDone && err != context.Canceled {
				t.Errorf("Commit after the cancel: err = %v, want sql.ErrTxDone or context.Canceled", err)
			}
			_, err = conn.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != driver.ErrBadConn {
				t.Errorf("BeginTx on the cancelled connection: err = %v, want driver.ErrBadConn", err)
			}
			if _, err := db.BeginTx(ctx, nil); err != context.Canceled {
				t.Errorf("BeginTx with the cancelled context: err = %v, want context.Canceled", err)
			}
			closed := make(chan error, 1)
			go func() { closed <- conn.Close() }()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("conn.Close() hangs after the cancel")
			}
			// The pool goes on with a fresh connection; the cancelled insert left nothing.
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 0 {
				t.Errorf("after the cancel: %d rows, %v; want 0 rows", n, err)
			}
		})
	}
}
