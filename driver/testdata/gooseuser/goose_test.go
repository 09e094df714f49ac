// Package gooseuser is a module of an application that migrates its schema with pressly/goose
// through obroute. TestGooseThroughObroute in package driver builds it in a module of its own
// (the go.mod is written there, goose is never a requirement of obroute's) and runs this test
// with the databases it made (sqltest.Shared) in OBROUTE_GOOSE_PLAIN_DSN, OBROUTE_GOOSE_HOT_DSN
// and OBROUTE_GOOSE_COLD_DSN.
package gooseuser_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	_ "github.com/obroute/obroute/driver"
	"github.com/pressly/goose/v3"
)

const dir = "migrations"

// The Go migrations, between the SQL files of dir: 00003 in a transaction on the default
// backend, 00004 out of a transaction on both backends.
func init() {
	goose.AddNamedMigrationContext("00003_insert_items.go",
		func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO items VALUES (1, 'one'), (2, 'two')")
			return err
		},
		func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM items")
			return err
		})
	goose.AddNamedMigrationNoTxContext("00004_on_both_backends.go",
		func(ctx context.Context, db *sql.DB) error {
			if _, err := db.ExecContext(ctx, "INSERT INTO audit_log VALUES (2, 'written by 00004')"); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, "UPDATE items SET name = 'one, by 00004' WHERE id = 1")
			return err
		},
		func(ctx context.Context, db *sql.DB) error {
			if _, err := db.ExecContext(ctx, "UPDATE items SET name = 'one' WHERE id = 1"); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, "DELETE FROM audit_log WHERE id = 2")
			return err
		})
}

// logLines keeps what goose logs (Status prints its table there).
type logLines struct {
	t     *testing.T
	lines []string
}

func (l *logLines) Printf(format string, v ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
}
func (l *logLines) Fatalf(format string, v ...any) { l.t.Fatalf(format, v...) }

// testLog sends what goose logs to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Printf(format string, v ...any) { l.t.Logf(format, v...) }
func (l testLog) Fatalf(format string, v ...any) { l.t.Fatalf(format, v...) }

// TestOpenDBWithDriver: goose picks its SQL dialect by driver name and knows no "obroute":
// the README says to open the handle with sql.Open and to call goose.SetDialect("mysql").
func TestOpenDBWithDriver(t *testing.T) {
	db, err := goose.OpenDBWithDriver("obroute", os.Getenv("OBROUTE_GOOSE_PLAIN_DSN"))
	if err == nil {
		db.Close()
		t.Fatal(`goose.OpenDBWithDriver("obroute", …) succeeded: goose knows obroute now, the README must say so`)
	}
	if !strings.Contains(err.Error(), "unknown dialect") {
		t.Errorf(`goose.OpenDBWithDriver("obroute", …): %v, want goose's "unknown dialect"`, err)
	}
}

// TestGoose runs goose's status, up and down through obroute, with a plain DSN (one backend)
// and a routed one (audit_log on backend cold, everything else and goose_db_version on hot),
// and checks after each step, on the backends themselves, which tables exist where, their rows
// and goose's versions.
func TestGoose(t *testing.T) {
	plain, hot, cold := dsn(t, "OBROUTE_GOOSE_PLAIN_DSN"), dsn(t, "OBROUTE_GOOSE_HOT_DSN"), dsn(t, "OBROUTE_GOOSE_COLD_DSN")
	if err := goose.SetDialect("mysql"); err != nil {
		t.Fatal(err)
	}
	t.Run("plain", func(t *testing.T) {
		b := open(t, "mysql", plain)
		migrate(t, plain, b, b)
	})
	t.Run("routed", func(t *testing.T) {
		routed := "obroute:backends.hot.dsn=" + hot + ";backends.cold.dsn=" + cold + ";routes.audit_log=cold"
		migrate(t, routed, open(t, "mysql", hot), open(t, "mysql", cold))
	})
}

func dsn(t *testing.T, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Fatalf("%s is not set: run this test through TestGooseThroughObroute (package driver)", env)
	}
	return v
}

func open(t *testing.T, driverName, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// state is what the backends hold: the tables of each, items' and audit_log's rows, and the
// versions in goose_db_version (on hot), in the order they were written.
type state struct {
	hotTables, coldTables []string
	items, auditLog       []string
	versions              []int64
}

// migrate runs goose through obroute on dsn; hot holds goose_db_version and items, cold
// audit_log (both are the same database with the plain DSN).
func migrate(t *testing.T, dsn string, hot, cold *sql.DB) {
	goose.SetLogger(testLog{t})
	defer goose.SetLogger(goose.NopLogger())
	db := open(t, "obroute", dsn)
	routed := hot != cold
	// want returns the state after the migrations up to version v (00005 counted when applied).
	want := func(v int64) state {
		var s state
		s.versions = []int64{0}
		for i := int64(1); i <= v; i++ {
			s.versions = append(s.versions, i)
		}
		s.hotTables = []string{"goose_db_version"}
		if v >= 1 {
			s.hotTables = append(s.hotTables, "items")
		}
		if v >= 2 {
			s.coldTables = []string{"audit_log"}
			s.auditLog = []string{"1 written by 00002"}
		}
		if v >= 3 {
			s.items = []string{"1 one", "2 two"}
		}
		if v >= 4 {
			s.items[0] = "1 one, by 00004"
			s.auditLog = append(s.auditLog, "2 written by 00004")
		}
		if v >= 5 {
			s.items[1] = "2 two, by 00005"
			s.auditLog[0] = "1 updated by 00005"
		}
		if !routed {
			s.hotTables = append(s.hotTables, s.coldTables...)
			slices.Sort(s.hotTables)
			s.coldTables = s.hotTables
		}
		return s
	}
	check := func(step string, v int64) {
		t.Helper()
		got, w := read(t, hot, cold), want(v)
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("after %s the backends hold\n%+v\nwant\n%+v", step, got, w)
		}
		if cur, err := goose.GetDBVersion(db); err != nil || cur != v {
			t.Fatalf("after %s goose.GetDBVersion = %d, %v; want %d", step, cur, err, v)
		}
	}

	status(t, db, nil) // creates goose_db_version (version 0): everything pending
	check("status", 0)
	if err := goose.UpTo(db, dir, 4); err != nil {
		t.Fatalf("goose.UpTo 4: %v", err)
	}
	check("up to 4", 4)

	// 00005 runs in a transaction on items and audit_log: one backend with the plain DSN, two
	// routed.
	err := goose.Up(db, dir)
	top := int64(5)
	if routed {
		if !errors.Is(err, connector.ErrCrossBackendTx) {
			t.Fatalf("goose.Up (00005: items, then audit_log in a transaction) = %v, want connector.ErrCrossBackendTx", err)
		}
		top = 4 // rolled back: nothing of 00005 on either backend
		check("up refused", top)

		// The same transaction on audit_log only: goose's INSERT INTO goose_db_version, a
		// table without a route, would reach another table of that name on audit_log's
		// backend, so it is refused before it runs.
		err = goose.Up(db, "routed_first")
		if !errors.Is(err, connector.ErrCrossBackendTx) || !strings.Contains(err.Error(), "goose_db_version") {
			t.Fatalf("goose.Up (00005: audit_log only in a transaction) = %v, want connector.ErrCrossBackendTx naming goose_db_version", err)
		}
	} else if err != nil {
		t.Fatalf("goose.Up: %v", err)
	}
	check("up", top)
	status(t, db, []int64{1, 2, 3, 4, top})

	for v := top - 1; v >= 0; v-- {
		if err := goose.Down(db, dir); err != nil {
			t.Fatalf("goose.Down from %d: %v", v+1, err)
		}
		check(fmt.Sprintf("down to %d", v), v)
	}
	status(t, db, nil)

	// Everything again after the way down: the same state as the first time.
	if err := goose.UpTo(db, dir, 4); err != nil {
		t.Fatalf("goose.UpTo 4 after down: %v", err)
	}
	check("up to 4 again", 4)
}

var statusLine = regexp.MustCompile(`^\s+(.+?)\s+-- (\d{5})_\S+$`)

// status runs goose.Status and checks that it lists the five migrations, the applied ones
// (versions, in order) with a time and the others as Pending.
func status(t *testing.T, db *sql.DB, applied []int64) {
	t.Helper()
	log := &logLines{t: t}
	goose.SetLogger(log)
	defer goose.SetLogger(testLog{t})
	if err := goose.Status(db, dir); err != nil {
		t.Fatalf("goose.Status: %v", err)
	}
	var got []string
	for _, l := range log.lines {
		if m := statusLine.FindStringSubmatch(l); m != nil {
			when := "applied"
			if m[1] == "Pending" {
				when = "Pending"
			}
			got = append(got, m[2]+" "+when)
		}
	}
	var want []string
	for v := int64(1); v <= 5; v++ {
		when := "Pending"
		if slices.Contains(applied, v) {
			when = "applied"
		}
		want = append(want, fmt.Sprintf("%05d %s", v, when))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("goose.Status printed\n%s\nread as %q, want %q", strings.Join(log.lines, "\n"), got, want)
	}
}

// read reads the state from the backends themselves (go-sql-driver, not obroute).
func read(t *testing.T, hot, cold *sql.DB) state {
	t.Helper()
	var s state
	s.hotTables = strs(t, hot, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")
	s.coldTables = strs(t, cold, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")
	if slices.Contains(s.hotTables, "items") {
		s.items = strs(t, hot, "SELECT CONCAT(id, ' ', name) FROM items ORDER BY id")
	}
	if slices.Contains(s.coldTables, "audit_log") {
		s.auditLog = strs(t, cold, "SELECT CONCAT(id, ' ', note) FROM audit_log ORDER BY id")
	}
	if slices.Contains(s.hotTables, "goose_db_version") {
		for _, v := range strs(t, hot, "SELECT version_id FROM goose_db_version ORDER BY id") {
			var n int64
			fmt.Sscan(v, &n)
			s.versions = append(s.versions, n)
		}
	}
	return s
}

func strs(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
