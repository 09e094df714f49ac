package sqltest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/sqltest"
)

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func queryInt(t *testing.T, db *sql.DB, query string) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// mariadbRunning reports whether a mariadbd listening on port is alive.
func mariadbRunning(t *testing.T, port int) bool {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", fmt.Sprintf("mariadbd .*--port=%d( |$)", port)).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false
	}
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	return strings.TrimSpace(string(out)) != ""
}

func TestMariaDB(t *testing.T) {
	bs := sqltest.MariaDB(t, "hot", "cold")
	hot, cold := bs[0], bs[1]

	t.Run("distinct ports", func(t *testing.T) {
		if hot.Port == cold.Port {
			t.Fatalf("both instances on port %d", hot.Port)
		}
		for _, b := range bs {
			if got := queryInt(t, b.DB, "SELECT @@port"); got != int64(b.Port) {
				t.Errorf("%s: @@port = %d, Backend.Port = %d", b.Name, got, b.Port)
			}
			if want := "127.0.0.1:" + strconv.Itoa(b.Port); b.Addr != want {
				t.Errorf("%s: Addr = %q, want %q", b.Name, b.Addr, want)
			}
			if !strings.HasPrefix(b.DSN, "root@tcp(127.0.0.1:") || !strings.Contains(b.DSN, "/test?") || !strings.Contains(b.DSN, "parseTime=true") || !strings.Contains(b.DSN, "loc=UTC") {
				t.Errorf("%s: DSN = %q, want root@tcp, database test, parseTime=true and loc=UTC", b.Name, b.DSN)
			}
		}
	})

	t.Run("committed row survives kill", func(t *testing.T) {
		hot.Exec(t, "CREATE TABLE survive (id INT PRIMARY KEY) ENGINE=InnoDB")
		hot.Exec(t, "INSERT INTO survive VALUES (42)")
		hot.Kill(t)
		if mariadbRunning(t, hot.Port) {
			t.Fatal("mariadbd still running after Kill")
		}
		if err := hot.DB.Ping(); err == nil {
			t.Fatal("killed backend answers")
		}
		hot.Start(t)
		if got := queryInt(t, open(t, hot.DSN), "SELECT id FROM survive"); got != 42 {
			t.Errorf("after Kill and Start: id = %d, want 42", got)
		}
		if got := queryInt(t, hot.DB, "SELECT @@port"); got != int64(hot.Port) {
			t.Errorf("restarted on port %d, want %d", got, hot.Port)
		}
	})

	t.Run("restart", func(t *testing.T) {
		cold.Exec(t, "CREATE TABLE r (id INT PRIMARY KEY)")
		cold.Exec(t, "INSERT INTO r VALUES (1)")
		cold.Restart(t)
		if got := queryInt(t, cold.DB, "SELECT COUNT(*) FROM r"); got != 1 {
			t.Errorf("after Restart: COUNT(*) = %d, want 1", got)
		}
	})

	t.Run("pause times out, resume restores", func(t *testing.T) {
		db := open(t, cold.DSN)
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		cold.Pause(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		start := time.Now()
		var one int
		err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
		cancel()
		if err == nil {
			cold.Resume(t)
			t.Fatal("query on a paused backend succeeded")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("query on a paused backend: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("query on a paused backend took %s with a 1s context", d)
		}
		cold.Resume(t)
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("after Resume: SELECT 1 = %d, %v", one, err)
		}
	})

	t.Run("connections", func(t *testing.T) {
		countConnections(t, hot)
	})

	t.Run("status counter", func(t *testing.T) {
		before := hot.StatusCounter(t, "Com_set_option")
		db := open(t, hot.DSN)
		db.SetMaxOpenConns(1)
		for i := 0; i < 3; i++ {
			if _, err := db.Exec("SET @x = 1"); err != nil {
				t.Fatal(err)
			}
		}
		if got := hot.StatusCounter(t, "Com_set_option") - before; got != 3 {
			t.Errorf("Com_set_option grew by %d after 3 SETs, want 3", got)
		}
	})
}

// countConnections checks that Connections sees one more connection while a
// client holds one, and not the admin handle's.
func countConnections(t *testing.T, b *sqltest.Backend) {
	t.Helper()
	b.Exec(t, "SELECT 1") // the admin handle has a connection of its own
	before := b.Connections(t)
	db := open(t, b.DSN)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.Connections(t); got != before+1 {
		t.Errorf("with one client connection open: Connections = %d, want %d", got, before+1)
	}
	_ = conn.Close()
	_ = db.Close()
	deadline := time.Now().Add(5 * time.Second)
	for b.Connections(t) != before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := b.Connections(t); got != before {
		t.Errorf("after closing it: Connections = %d, want %d", got, before)
	}
}

func TestMariaDBGeneralLog(t *testing.T) {
	b := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "logged")[0]
	b.Exec(t, "CREATE TABLE admin_only (id INT)")
	db := open(t, b.DSN)
	if _, err := db.Exec("SELECT 'from the client'"); err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, e := range b.GeneralLog(t) {
		if e.Command == "Query" {
			queries = append(queries, e.Text)
		}
	}
	if fmt.Sprint(queries) != "[SELECT 'from the client']" {
		t.Errorf("general log queries = %q, want only the client's SELECT", queries)
	}
}

// With TimeZones a session can be in a named zone with daylight saving time, which the server
// converts by its time-zone tables: 2026-10-25 01:30 UTC is 02:30 CET, the second pass of the
// hour Europe/Berlin repeats. Without them the zone is unknown to the server.
func TestMariaDBTimeZones(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "zones")
	bs = append(bs, sqltest.MariaDB(t, "plain")[0])
	const q = "SELECT CAST(CONVERT_TZ('2026-10-25 01:30:00', '+00:00', 'Europe/Berlin') AS CHAR)"
	var s sql.NullString
	if err := open(t, bs[0].DSN).QueryRow(q).Scan(&s); err != nil || s.String != "2026-10-25 02:30:00" {
		t.Errorf("with the zone database: %s = %v (%v), want 2026-10-25 02:30:00", q, s, err)
	}
	if err := open(t, bs[1].DSN).QueryRow(q).Scan(&s); err != nil || s.Valid {
		t.Errorf("without it: %s = %v (%v), want NULL (zone unknown)", q, s, err)
	}
}

func TestMariaDBCleanupLeavesNoProcess(t *testing.T) {
	var port int
	t.Run("instance", func(t *testing.T) {
		b := sqltest.MariaDB(t, "short-lived")[0]
		port = b.Port
		b.Pause(t) // cleanup must kill a paused server too
	})
	if port == 0 {
		t.Skip("no instance started")
	}
	if mariadbRunning(t, port) {
		t.Errorf("mariadbd on port %d still running after the test's cleanup", port)
	}
}

// TestMariaDBNoOrphanAfterCrash runs a child test process that starts an
// instance and exits without cleanup; its mariadbd must die with it.
func TestMariaDBNoOrphanAfterCrash(t *testing.T) {
	if os.Getenv("SQLTEST_ORPHAN_CHILD") == "1" {
		b := sqltest.MariaDB(t, "orphan")[0]
		fmt.Printf("PORT=%d\n", b.Port)
		os.Exit(3) // no cleanup runs
	}
	if _, err := exec.LookPath("pgrep"); err != nil {
		if sqltest.RequireServers() {
			t.Fatal("pgrep not installed (apt-get install procps): the orphan check cannot run")
		}
		t.Skip("pgrep not installed")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMariaDBNoOrphanAfterCrash$")
	// The child's data directory lands in our TempDir, removed at cleanup.
	cmd.Env = append(os.Environ(), "SQLTEST_ORPHAN_CHILD=1", "TMPDIR="+t.TempDir())
	out, _ := cmd.Output()
	var port int
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "PORT="); ok {
			port, _ = strconv.Atoi(p)
		}
	}
	if port == 0 {
		if strings.Contains(string(out), "SKIP") {
			t.Skip("child skipped: no mariadbd")
		}
		t.Fatalf("child did not start an instance:\n%s", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mariadbRunning(t, port) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if mariadbRunning(t, port) {
		t.Errorf("mariadbd on port %d outlived its test process", port)
	}
}

func TestEmbedded(t *testing.T) {
	bs := sqltest.Embedded(t, "e1", "e2")
	e1, e2 := bs[0], bs[1]
	if e1.Port == e2.Port {
		t.Fatalf("both on port %d", e1.Port)
	}
	e1.Exec(t, "CREATE TABLE t (id INT PRIMARY KEY)")
	e1.Exec(t, "INSERT INTO t VALUES (?)", 7)
	if got := queryInt(t, open(t, e1.DSN), "SELECT id FROM t"); got != 7 {
		t.Errorf("SELECT id = %d, want 7", got)
	}
	t.Run("connections", func(t *testing.T) { countConnections(t, e2) })
	t.Run("restart on the same port", func(t *testing.T) {
		e2.Stop(t)
		if err := e2.DB.Ping(); err == nil {
			t.Fatal("stopped backend answers")
		}
		e2.Start(t)
		if err := open(t, e2.DSN).Ping(); err != nil {
			t.Errorf("after Start on port %d: %v", e2.Port, err)
		}
	})
}

func TestShared(t *testing.T) {
	var name, dsn string
	t.Run("backend", func(t *testing.T) {
		b := sqltest.Shared(t, "orders")[0]
		if err := b.DB.QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "sqltest_") || !strings.Contains(b.DSN, "/"+name+"?") {
			t.Errorf("database %q, DSN %q: want a fresh sqltest_ database in the DSN", name, b.DSN)
		}
		b.Exec(t, "CREATE TABLE t (id INT)")
		countConnections(t, b)
		dsn = strings.Replace(b.DSN, "/"+name+"?", "/?", 1)
	})
	if name == "" {
		t.Skip("no shared server")
	}
	var found string
	err := open(t, dsn).QueryRow("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&found)
	if !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("database %s still exists after cleanup (err %v)", name, err)
	}
}

func TestSharedUnreachableSkipsUnlessRequired(t *testing.T) {
	t.Setenv(sqltest.EnvTestDSN, "root@tcp(127.0.0.1:1)/")
	tests := []struct {
		require  string
		wantSkip bool
	}{
		{"", true},
		{"1", false},
	}
	for _, tt := range tests {
		t.Run("require="+tt.require, func(t *testing.T) {
			t.Setenv(sqltest.EnvRequireServers, tt.require)
			r := runFake(t, func(tb testing.TB) { sqltest.Shared(tb, "x") })
			if r.skipped != tt.wantSkip || r.failed == tt.wantSkip {
				t.Errorf("skipped=%v failed=%v, want skipped=%v; message %q", r.skipped, r.failed, tt.wantSkip, r.msg)
			}
			if !strings.Contains(r.msg, sqltest.EnvTestDSN) {
				t.Errorf("message %q does not name %s", r.msg, sqltest.EnvTestDSN)
			}
		})
	}
}
