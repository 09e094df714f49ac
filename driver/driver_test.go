package driver_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	obroute "github.com/obroute/obroute/driver"
	"github.com/obroute/obroute/sqltest"
)

// TestRegistered: importing the package registers "obroute" with a driver that implements
// driver.DriverContext, so database/sql parses the DSN once, at sql.Open (a bad one fails
// there, not at the first statement); the handle's driver opens connections by DSN too.
func TestRegistered(t *testing.T) {
	if !slices.Contains(sql.Drivers(), obroute.Name) {
		t.Fatalf("sql.Drivers() = %v, want it to contain %q", sql.Drivers(), obroute.Name)
	}
	if _, ok := any(obroute.Driver{}).(driver.DriverContext); !ok {
		t.Errorf("%T does not implement driver.DriverContext", obroute.Driver{})
	}
	if db, err := sql.Open(obroute.Name, "obroute:colour=blue"); err == nil {
		db.Close()
		t.Errorf("sql.Open accepted a bad DSN: the registered driver does not parse it at sql.Open")
	}

	b := sqltest.Shared(t, "hot")[0]
	db, err := sql.Open(obroute.Name, b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := connector.FromDB(db); err != nil {
		t.Errorf("connector.FromDB of a handle opened by name: %v", err)
	}
	conn, err := db.Driver().Open(b.DSN)
	if err != nil {
		t.Fatalf("db.Driver().Open: %v", err)
	}
	defer conn.Close()
	if got, want := queryConn(t, conn, "SELECT DATABASE()"), databaseOf(t, b); got != want {
		t.Errorf("db.Driver().Open's connection is in database %q, want %q", got, want)
	}
}

// queryString runs query on db and returns its one string.
func queryString(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s string
	if err := db.QueryRowContext(ctx, query).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// databaseOf returns the database a backend's DSN names (its fresh database on the shared server).
func databaseOf(t *testing.T, b *sqltest.Backend) string {
	t.Helper()
	return queryString(t, b.DB, "SELECT DATABASE()")
}

// TestOpenPlainDSN: a plain go-sql-driver DSN opens one backend; the statement runs on it.
func TestOpenPlainDSN(t *testing.T) {
	b := sqltest.Shared(t, "hot")[0]
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))")
	if _, err := db.Exec("INSERT INTO items VALUES (?, ?)", 1, "one"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, b.DB, "SELECT note FROM items WHERE id = 1"); got != "one" {
		t.Errorf("the backend holds note %q, want %q", got, "one")
	}
	if got, want := queryString(t, db, "SELECT DATABASE()"), databaseOf(t, b); got != want {
		t.Errorf("obroute's session is in database %q, want the DSN's %q", got, want)
	}
}

// twoBackends makes a hot and a cold database on the shared server, with table audit_log on
// cold only, each holding a row that says where it is.
func twoBackends(t *testing.T) (hot, cold *sqltest.Backend) {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold = bs[0], bs[1]
	cold.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(20))")
	cold.Exec(t, "INSERT INTO audit_log VALUES (1, 'on cold')")
	return hot, cold
}

// checkRoutes asserts that db sends statements on audit_log to cold and the others to hot.
func checkRoutes(t *testing.T, db *sql.DB, hot, cold *sqltest.Backend) {
	t.Helper()
	if got, want := queryString(t, db, "SELECT DATABASE()"), databaseOf(t, hot); got != want {
		t.Errorf("a statement naming no table ran in %q, want the default backend's %q", got, want)
	}
	if got := queryString(t, db, "SELECT note FROM audit_log WHERE id = 1"); got != "on cold" {
		t.Errorf("audit_log read %q, want %q (its route is cold)", got, "on cold")
	}
	if _, err := db.Exec("INSERT INTO audit_log VALUES (2, 'written')"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, cold.DB, "SELECT note FROM audit_log WHERE id = 2"); got != "written" {
		t.Errorf("cold holds %q, want the row written through obroute", got)
	}
}

// TestOpenObrouteDSN: the obroute: key=value form, with a static route, runs each statement on
// the backend its rule names.
func TestOpenObrouteDSN(t *testing.T) {
	hot, cold := twoBackends(t)
	dsn := "obroute:backends.hot.dsn=" + hot.DSN + ";backends.cold.dsn=" + cold.DSN + ";routes.audit_log=cold"
	db, err := sql.Open("obroute", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkRoutes(t, db, hot, cold)
}

// TestOpenYAMLFile: obroute:config=PATH reads a YAML file, and the DSN's other keys add to it.
func TestOpenYAMLFile(t *testing.T) {
	hot, cold := twoBackends(t)
	path := filepath.Join(t.TempDir(), "obroute.yaml")
	yaml := "backends:\n" +
		"  - {name: hot, role: hot, dsn: '" + hot.DSN + "'}\n" +
		"  - {name: cold, role: cold, dsn: '" + cold.DSN + "'}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("obroute", "obroute:config="+path+";routes.audit_log=cold")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkRoutes(t, db, hot, cold)
}

// TestBareDriverOpen: driver.Driver's Open, for callers that bypass database/sql's connector,
// opens a connection that runs statements.
func TestBareDriverOpen(t *testing.T) {
	b := sqltest.Shared(t, "hot")[0]
	conn, err := obroute.Driver{}.Open(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got, want := queryConn(t, conn, "SELECT DATABASE()"), databaseOf(t, b); got != want {
		t.Errorf("the connection is in database %q, want %q", got, want)
	}
}

// queryConn runs query on a bare driver connection and returns its one value as a string.
func queryConn(t *testing.T, conn driver.Conn, query string) string {
	t.Helper()
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		t.Fatalf("%T does not implement driver.QueryerContext", conn)
	}
	rows, err := q.QueryContext(context.Background(), query, nil)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if err := rows.Next(make([]driver.Value, 1)); err != io.EOF {
		t.Errorf("%s: a second row or an error: %v", query, err)
	}
	switch v := dest[0].(type) {
	case []byte:
		return string(v)
	case string:
		return v
	default:
		t.Fatalf("%s: got %T %v, want text", query, v, v)
		return ""
	}
}

// TestBadDSN: a bad DSN fails sql.Open itself (and the bare driver's Open) with a
// *config.Error that names what is wrong, never with a password.
func TestBadDSN(t *testing.T) {
	const password = "Zq9x%PW"
	for _, tc := range []struct {
		name, dsn string
		want      []string
	}{
		{"unparsable plain DSN", "app:" + password + "@tcp(127.0.0.1:3306", []string{"backends.hot.dsn", "invalid go-sql-driver DSN"}},
		{"unparsable backend DSN", "obroute:backends.hot.dsn=app:" + password + "@tcp(127.0.0.1:3306)", []string{"backends.hot.dsn", "invalid go-sql-driver DSN"}},
		{"route to a backend not configured", "obroute:backends.hot.dsn=app:" + password + "@tcp(127.0.0.1:3306)/test;routes.audit_log=cold", []string{"routes.audit_log", `"cold"`}},
		{"unknown key", "obroute:backends.hot.dsn=app:" + password + "@tcp(127.0.0.1:3306)/test;colour=blue", []string{"colour", "unknown DSN key"}},
		{"backend DSN without its key", "obroute:app:" + password + "@tcp(127.0.0.1:3306)/test?parseTime=true", []string{"DSN item 1", "backends.NAME.dsn="}},
		{"hot window of days and months", "obroute:backends.hot.dsn=app:" + password + "@tcp(127.0.0.1:3306)/test;time_tables.orders.shard_key=order_time;" +
			"time_tables.orders.hot_window.days=3;time_tables.orders.hot_window.months=1", []string{"time_tables.orders.hot_window", "exactly one"}},
		{"shadow regex that does not compile", "obroute:backends.hot.dsn=app:" + password + "@tcp(127.0.0.1:3306)/test;backends.shadow_hot.dsn=app:" + password +
			"@tcp(127.0.0.1:3306)/test;backends.shadow_hot.role=shadow;shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.a.kind=regex_match;shadow.algorithms.a.column=c;" +
			"shadow.algorithms.a.operation=insert;shadow.algorithms.a.regex=(;shadow.tables.t.algorithms=a", []string{"shadow", "does not compile"}},
		{"missing YAML file", "obroute:config=" + filepath.Join(t.TempDir(), "none.yaml"), []string{"config=", "cannot read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("obroute", tc.dsn)
			if err == nil {
				db.Close()
				t.Fatalf("sql.Open(%q) succeeded; want the DSN refused", tc.dsn)
			}
			_, bareErr := obroute.Driver{}.Open(tc.dsn)
			for _, e := range []error{err, bareErr} {
				if e == nil {
					t.Fatalf("Driver.Open(%q) succeeded; want the DSN refused", tc.dsn)
				}
				for _, w := range tc.want {
					if !strings.Contains(e.Error(), w) {
						t.Errorf("error %q does not say %q", e, w)
					}
				}
				if strings.Contains(e.Error(), password) {
					t.Errorf("error %q shows the password", e)
				}
				var ce *config.Error
				if !errors.As(e, &ce) {
					t.Errorf("error %T is not a *config.Error", e)
				}
			}
		})
	}
}
