package sqltest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/rowscan"
)

// Env vars read by this package.
const (
	// EnvRequireServers, when "1", turns every skip for a missing server or
	// binary into a test failure (set it in CI).
	EnvRequireServers = "OBROUTE_REQUIRE_SERVERS"
	// EnvTestDSN is the go-sql-driver DSN of the existing server used by
	// [Shared]. Default [DefaultTestDSN].
	EnvTestDSN = "OBROUTE_TEST_DSN"
	// DefaultTestDSN is used by [Shared] when EnvTestDSN is unset.
	DefaultTestDSN = "root@tcp(127.0.0.1:3306)/"
)

// RequireServers reports whether env OBROUTE_REQUIRE_SERVERS=1, in which case
// a missing server or binary fails the test instead of skipping it.
func RequireServers() bool { return os.Getenv(EnvRequireServers) == "1" }

// unavailable skips the test, or fails it under RequireServers.
func unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireServers() {
		tb.Fatalf("%s (%s=1, so this is a failure rather than a skip)", msg, EnvRequireServers)
	}
	tb.Skip(msg)
}

// Backend is one MySQL-protocol backend for a test: a real mariadbd process
// ([MariaDB]), an in-process server ([Embedded]) or a database on an existing
// server ([Shared]).
type Backend struct {
	// Name is the name the test gave the backend.
	Name string
	// Addr is "127.0.0.1:PORT" (for Shared, the address from the DSN).
	Addr string
	// Port is the TCP port of Addr.
	Port int
	// DSN is a go-sql-driver DSN to the backend's database (`test` for
	// MariaDB and Embedded, the fresh database for Shared), with
	// parseTime=true&loc=UTC. It may contain a password: do not log it.
	DSN string
	// DB is an admin handle to the backend's database for setup and for
	// counting on the server side. Its own connections are excluded from
	// [Backend.Connections] and [Backend.GeneralLog].
	DB *sql.DB

	kind     string // "mariadb", "embedded" or "shared"
	database string
	life     lifecycle // nil for Shared
	admin    *adminConns
}

// lifecycle is what MariaDB and Embedded backends can do to their server.
type lifecycle interface {
	stop(kill bool) error
	start() error
	pause() error
	resume() error
	describe() string // log tail or similar, for failure messages
}

// Exec runs a statement on the admin handle and fails the test on error.
func (b *Backend) Exec(tb testing.TB, query string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.DB.ExecContext(ctx, query, args...); err != nil {
		tb.Fatalf("backend %s: %s: %v", b.Name, query, err)
	}
}

func (b *Backend) lifecycle(tb testing.TB, op string) lifecycle {
	tb.Helper()
	if b.life == nil {
		tb.Fatalf("backend %s: %s is not possible on a %s backend (it shares a server other tests use); use sqltest.MariaDB", b.Name, op, b.kind)
	}
	return b.life
}

// Stop stops the server gracefully (SIGTERM, then waits for it to exit).
// Embedded backends lose their data on Stop.
func (b *Backend) Stop(tb testing.TB) {
	tb.Helper()
	if err := b.lifecycle(tb, "Stop").stop(false); err != nil {
		tb.Fatalf("backend %s: stop: %v", b.Name, err)
	}
	b.dropIdleAdminConns()
}

// Kill stops the server abruptly (SIGKILL); committed InnoDB data survives.
func (b *Backend) Kill(tb testing.TB) {
	tb.Helper()
	if err := b.lifecycle(tb, "Kill").stop(true); err != nil {
		tb.Fatalf("backend %s: kill: %v", b.Name, err)
	}
	b.dropIdleAdminConns()
}

// Start starts a stopped or killed server again on the same port and data
// directory and waits until it accepts connections. Starting a running
// server does nothing.
func (b *Backend) Start(tb testing.TB) {
	tb.Helper()
	if err := b.lifecycle(tb, "Start").start(); err != nil {
		tb.Fatalf("backend %s: start: %v", b.Name, err)
	}
}

// dropIdleAdminConns closes the admin handle's idle connections, which died
// with the server, so its next use connects afresh.
func (b *Backend) dropIdleAdminConns() {
	b.DB.SetMaxIdleConns(0)
	b.DB.SetMaxIdleConns(2) // database/sql's default
}

// Restart is Stop then Start.
func (b *Backend) Restart(tb testing.TB) {
	tb.Helper()
	b.Stop(tb)
	b.Start(tb)
}

// Pause freezes the server process (SIGSTOP): connections stay open but
// nothing answers, as with a hung or partitioned backend. MariaDB only.
func (b *Backend) Pause(tb testing.TB) {
	tb.Helper()
	if err := b.lifecycle(tb, "Pause").pause(); err != nil {
		tb.Fatalf("backend %s: pause: %v", b.Name, err)
	}
}

// Resume continues a paused server (SIGCONT).
func (b *Backend) Resume(tb testing.TB) {
	tb.Helper()
	if err := b.lifecycle(tb, "Resume").resume(); err != nil {
		tb.Fatalf("backend %s: resume: %v", b.Name, err)
	}
}

// Connections returns the number of client connections on the server, not
// counting the admin handle's own, read from SHOW PROCESSLIST: use it to
// check for leaked server sessions. Server threads (event scheduler,
// replication) are not counted. On a Shared backend only connections whose
// current database is the backend's database count.
func (b *Backend) Connections(tb testing.TB) int {
	tb.Helper()
	n := 0
	b.readRows(tb, "SHOW PROCESSLIST", "SHOW PROCESSLIST", func(rows *sql.Rows) error {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		idCol, userCol, cmdCol, dbCol := -1, -1, -1, -1
		for i, c := range cols {
			switch strings.ToLower(c) {
			case "id":
				idCol = i
			case "user":
				userCol = i
			case "command":
				cmdCol = i
			case "db":
				dbCol = i
			}
		}
		if idCol < 0 || userCol < 0 || cmdCol < 0 || dbCol < 0 {
			return fmt.Errorf("columns %v, want Id, User, Command and db", cols)
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := rowscan.Targets(vals)
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			id, _ := strconv.ParseUint(vals[idCol].String, 10, 32)
			switch {
			case vals[cmdCol].String == "Daemon", vals[userCol].String == "system user", vals[userCol].String == "event_scheduler":
			case b.admin.live(uint32(id)):
			case b.kind == "shared" && vals[dbCol].String != b.database:
			default:
				n++
			}
		}
		return nil
	})
	return n
}

// readRows runs query on the admin handle, bounded by 30 s, and hands its rows to read, which
// reads them; an error of the query, of read or of the rows fails the test, naming what.
func (b *Backend) readRows(tb testing.TB, what, query string, read func(*sql.Rows) error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := b.DB.QueryContext(ctx, query)
	if err == nil {
		if err = read(rows); err == nil {
			err = rows.Err()
		}
		rows.Close()
	}
	if err != nil {
		tb.Fatalf("backend %s: %s: %v", b.Name, what, err)
	}
}

// StatusCounter returns a SHOW GLOBAL STATUS value, for example
// "Com_set_option" or "Questions". The counters are server-wide and include
// the admin handle's own statements (each StatusCounter call adds to
// "Questions"); compare differences between two calls.
func (b *Backend) StatusCounter(tb testing.TB, name string) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !statusName.MatchString(name) {
		tb.Fatalf("backend %s: %q is not a status variable name (letters, digits and _ only)", b.Name, name)
	}
	var got string
	var value sql.NullString
	// SHOW takes no placeholders; the name was checked above.
	err := b.DB.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&got, &value)
	if err == sql.ErrNoRows {
		tb.Fatalf("backend %s: no status variable %q (see SHOW GLOBAL STATUS for the names)", b.Name, name)
	}
	if err != nil {
		tb.Fatalf("backend %s: SHOW GLOBAL STATUS LIKE %q: %v", b.Name, name, err)
	}
	v, err := strconv.ParseInt(value.String, 10, 64)
	if err != nil {
		tb.Fatalf("backend %s: status variable %s = %q is not a counter", b.Name, got, value.String)
	}
	return v
}

var statusName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// connect fills in b's address and DSN for b.database on the server cfg reaches (cfg's DBName
// is ignored) and opens b's admin handle, closed when the test ends.
func (b *Backend) connect(tb testing.TB, cfg *mysql.Config) {
	tb.Helper()
	c := cfg.Clone()
	c.Net = "tcp" // cfg may name the admin network
	c.DBName = b.database
	c.ParseTime = true
	c.Loc = time.UTC
	host, portStr, err := net.SplitHostPort(c.Addr)
	if err != nil {
		tb.Fatalf("backend %s: address %q is not host:port: %v", b.Name, c.Addr, err)
	}
	b.Addr = net.JoinHostPort(host, portStr)
	b.Port, _ = strconv.Atoi(portStr)
	b.DSN = c.FormatDSN() + "&loc=UTC"
	b.DB, err = b.admin.openDB(c)
	if err != nil {
		tb.Fatalf("backend %s: admin handle: %v", b.Name, err)
	}
	tb.Cleanup(func() { _ = b.DB.Close() })
}
