package embedded_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/obroute/obroute/embedded"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start starts a server and an admin *sql.DB on database test, both closed at
// cleanup.
func start(t *testing.T, opts embedded.Options) (*embedded.Server, *sql.DB) {
	t.Helper()
	srv, err := embedded.Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	db := open(t, srv.DSN(firstOr(opts.Databases, "test")))
	return srv, db
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func exec(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func ints(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) []int64 {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("%s: scan: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func equal(a, b []int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestStartDefaults(t *testing.T) {
	srv, db := start(t, embedded.Options{Name: "hot"})
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") || srv.Port() == 0 {
		t.Fatalf("Addr() = %q, Port() = %d; want 127.0.0.1 and a non-zero port", srv.Addr(), srv.Port())
	}
	want := fmt.Sprintf("root@tcp(127.0.0.1:%d)/test?parseTime=true", srv.Port())
	if got := srv.DSN("test"); got != want {
		t.Errorf("DSN(test) = %q, want %q", got, want)
	}
	var name string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&name); err != nil || name != "test" {
		t.Errorf("SELECT DATABASE() = %q, %v; want test", name, err)
	}
	if s := srv.String(); !strings.Contains(s, "hot") || !strings.Contains(s, srv.Addr()) {
		t.Errorf("String() = %q, want the name and address", s)
	}
}

func TestTwoServersAreIndependent(t *testing.T) {
	a, dbA := start(t, embedded.Options{Name: "a"})
	b, dbB := start(t, embedded.Options{Name: "b"})
	if a.Addr() == b.Addr() {
		t.Fatalf("both servers listen on %s", a.Addr())
	}
	exec(t, dbA, "CREATE TABLE t (id INT PRIMARY KEY)")
	exec(t, dbA, "INSERT INTO t VALUES (1)")
	if _, err := dbB.Exec("SELECT * FROM t"); err == nil {
		t.Error("table created on server a is visible on server b")
	}
}

func TestRestartOnSamePort(t *testing.T) {
	first, err := embedded.Start(embedded.Options{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	port := first.Port()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	_, db := start(t, embedded.Options{Name: "again", Port: port})
	if err := db.Ping(); err != nil {
		t.Fatalf("server restarted on port %d: %v", port, err)
	}
}

func TestDatabasesOption(t *testing.T) {
	srv, _ := start(t, embedded.Options{Databases: []string{"hot", "cold"}})
	for _, name := range []string{"hot", "cold"} {
		db := open(t, srv.DSN(name))
		exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	}
	db := open(t, srv.DSN("test"))
	if err := db.Ping(); err == nil {
		t.Error("database test exists although Databases did not list it")
	}
}

func TestInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts embedded.Options
	}{
		{"blank database", embedded.Options{Databases: []string{"test", ""}}},
		{"duplicate database", embedded.Options{Databases: []string{"a", "a"}}},
		{"negative port", embedded.Options{Port: -1}},
		{"port too large", embedded.Options{Port: 70000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := embedded.Start(tt.opts)
			if err == nil {
				_ = srv.Close()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, embedded.ErrInvalidOptions) {
				t.Errorf("error %v is not ErrInvalidOptions", err)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	srv, db := start(t, embedded.Options{Name: "secured", User: "app", Password: "s3cret"})
	if err := db.Ping(); err != nil {
		t.Fatalf("DSN with the configured password: %v", err)
	}
	if !strings.HasPrefix(srv.DSN("test"), "app:s3cret@tcp(") {
		t.Errorf("DSN = %q, want user app and its password", srv.DSN("test"))
	}
	if strings.Contains(srv.String(), "s3cret") {
		t.Errorf("String() = %q reveals the password", srv.String())
	}
	for _, dsn := range []string{
		fmt.Sprintf("app:wrong@tcp(%s)/test", srv.Addr()),
		fmt.Sprintf("root@tcp(%s)/test", srv.Addr()),
	} {
		bad := open(t, dsn)
		if err := bad.Ping(); err == nil {
			t.Errorf("connection with wrong credentials succeeded")
		}
	}
}

func TestSQL(t *testing.T) {
	_, db := start(t, embedded.Options{Name: "sql"})
	exec(t, db, "CREATE TABLE orders (id INT PRIMARY KEY, amount INT NOT NULL, created DATETIME NOT NULL)")
	exec(t, db, "CREATE TABLE orders_history (id INT PRIMARY KEY, amount INT NOT NULL, created DATETIME NOT NULL)")
	exec(t, db, "INSERT INTO orders VALUES (3, 30, '2026-01-03 00:00:00'), (1, 10, '2026-01-01 00:00:00'), (5, 50, '2026-01-05 00:00:00')")
	exec(t, db, "INSERT INTO orders_history VALUES (?, ?, ?), (?, ?, ?)",
		2, 20, time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), 4, 40, time.Date(2025, 1, 4, 0, 0, 0, 0, time.UTC))

	t.Run("select order by limit", func(t *testing.T) {
		got := ints(t, db, "SELECT id FROM orders ORDER BY id DESC LIMIT 2")
		if want := []int64{5, 3}; !equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("parse time", func(t *testing.T) {
		var created time.Time
		if err := db.QueryRow("SELECT created FROM orders_history WHERE id = 4").Scan(&created); err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2025, 1, 4, 0, 0, 0, 0, time.UTC); !created.Equal(want) {
			t.Errorf("created = %v, want %v", created, want)
		}
	})
	t.Run("union all order by limit", func(t *testing.T) {
		got := ints(t, db, "(SELECT id FROM orders WHERE amount > 5) UNION ALL (SELECT id FROM orders_history) ORDER BY 1 LIMIT 4")
		if want := []int64{1, 2, 3, 4}; !equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("time_zone", func(t *testing.T) {
		conn := conn(t, db)
		for _, tz := range []string{"+08:00", "Asia/Shanghai", "UTC"} {
			exec(t, conn, "SET time_zone = ?", tz)
			var got string
			if err := conn.QueryRowContext(context.Background(), "SELECT @@time_zone").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tz {
				t.Errorf("after SET time_zone = %q, @@time_zone = %q", tz, got)
			}
		}
	})
	t.Run("timestamp not converted to session time_zone", func(t *testing.T) {
		// A known difference from MySQL, documented in the package doc.
		c := conn(t, db)
		exec(t, c, "CREATE TABLE stamps (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL)")
		exec(t, c, "SET time_zone = '+00:00'")
		exec(t, c, "INSERT INTO stamps VALUES (1, '2026-01-01 00:00:00')")
		exec(t, c, "SET time_zone = '+08:00'")
		var got string
		if err := c.QueryRowContext(context.Background(), "SELECT CAST(ts AS CHAR) FROM stamps").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != "2026-01-01 00:00:00" {
			t.Errorf("ts at +08:00 = %q; go-mysql-server now converts TIMESTAMP (MySQL gives 2026-01-01 08:00:00): update the package doc", got)
		}
	})
	t.Run("connection id", func(t *testing.T) {
		c1, c2 := conn(t, db), conn(t, db)
		id1a, id1b, id2 := connID(t, c1), connID(t, c1), connID(t, c2)
		if id1a != id1b {
			t.Errorf("CONNECTION_ID() changed on one connection: %d then %d", id1a, id1b)
		}
		if id1a == id2 {
			t.Errorf("two connections share CONNECTION_ID() %d", id1a)
		}
	})
	t.Run("temporary table unsupported", func(t *testing.T) {
		// go-mysql-server's in-memory databases have no temporary tables; the
		// package doc says so. If this starts failing, update the doc.
		_, err := db.Exec("CREATE TEMPORARY TABLE scratch (id INT PRIMARY KEY)")
		if err == nil || !strings.Contains(err.Error(), "does not support temporary tables") {
			t.Errorf("CREATE TEMPORARY TABLE: err = %v, want \"does not support temporary tables\"", err)
		}
	})
	t.Run("transactions", func(t *testing.T) {
		exec(t, db, "CREATE TABLE tx (id INT PRIMARY KEY)")
		c := conn(t, db)
		exec(t, c, "BEGIN")
		exec(t, c, "INSERT INTO tx VALUES (1)")
		exec(t, c, "COMMIT")
		exec(t, c, "BEGIN")
		exec(t, c, "INSERT INTO tx VALUES (2)")
		other := conn(t, db)
		if got := ints(t, other, "SELECT id FROM tx ORDER BY id"); !equal(got, []int64{1}) {
			t.Errorf("another connection during the transaction: %v, want [1]", got)
		}
		if got := ints(t, c, "SELECT id FROM tx ORDER BY id"); !equal(got, []int64{1, 2}) {
			t.Errorf("inside the transaction: %v, want [1 2]", got)
		}
		exec(t, c, "ROLLBACK")
		if got := ints(t, db, "SELECT id FROM tx ORDER BY id"); !equal(got, []int64{1}) {
			t.Errorf("after ROLLBACK: %v, want [1]", got)
		}
	})
	t.Run("database/sql Tx", func(t *testing.T) {
		exec(t, db, "CREATE TABLE tx2 (id INT PRIMARY KEY)")
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		exec(t, tx, "INSERT INTO tx2 VALUES (1)")
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if got := ints(t, db, "SELECT COUNT(*) FROM tx2"); !equal(got, []int64{0}) {
			t.Errorf("after Rollback: COUNT(*) = %v, want [0]", got)
		}
	})
}

func conn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func connID(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var id int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCloseEndsClientConnectionsAndGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	srv, err := embedded.Start(embedded.Options{Name: "leak"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", srv.DSN("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := c.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err == nil {
		t.Error("a client connection still answers after Close")
	}
	_ = c.Close()
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := db.PingContext(context.Background()); err == nil {
		t.Error("new connection accepted after Close")
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogger(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, db := start(t, embedded.Options{Name: "logged", Password: "pw-not-logged", Logger: logger})
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"embedded backend started", "component=go-mysql-server", "embedded backend stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pw-not-logged") {
		t.Errorf("log reveals the password:\n%s", out)
	}
}
