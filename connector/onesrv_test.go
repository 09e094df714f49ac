package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/sqltest"
)

// oneServer is obroute over two backends, hot and cold, with table audit_log routed to cold and
// items on hot (the default), beside one server holding both tables: the same statements run on
// both, and their answers, the rows of every table and its locks are compared. A client session
// of obroute must behave as one server session would.
type oneServer struct {
	db, ref        *sql.DB
	hot, cold, one *sqltest.Backend
}

// oneServerTables are the tables of oneServer, created on every backend and on the one server.
var oneServerTables = []string{"items", "audit_log"}

// newOneServer starts the backends: databases on the shared server, or (isolated: for what a
// server holds in one namespace, such as user-level locks and global read locks) MariaDB
// processes of their own. params are added to both backends' DSNs.
func newOneServer(t *testing.T, isolated bool, params string) *oneServer {
	t.Helper()
	var bs []*sqltest.Backend
	if isolated {
		bs = sqltest.MariaDB(t, "hot", "cold", "one")
	} else {
		bs = sqltest.Shared(t, "hot", "cold", "one")
	}
	o := &oneServer{hot: bs[0], cold: bs[1], one: bs[2]}
	for _, b := range bs {
		for _, table := range oneServerTables {
			b.Exec(t, "CREATE TABLE "+table+" (id INT PRIMARY KEY, note VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)")
		}
	}
	var err error
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold", o.hot.DSN+params, o.cold.DSN+params)
	if o.db, err = sql.Open("obroute", dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.db.Close() })
	if o.ref, err = sql.Open("mysql", o.one.DSN+params); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.ref.Close() })
	// Each pair's connections end with it: none carries its session to the next.
	o.db.SetMaxIdleConns(0)
	o.ref.SetMaxIdleConns(0)
	return o
}

// pair is one client session of obroute and one connection to the one server.
type pair struct {
	t       *testing.T
	o       *oneServer
	ob, ref *sql.Conn
}

func (o *oneServer) pair(t *testing.T) *pair {
	t.Helper()
	ctx := context.Background()
	ob, err := o.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := o.ref.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ob.Close(); ref.Close() })
	return &pair{t: t, o: o, ob: ob, ref: ref}
}

// outcome is what a statement answered: its columns (name and database type), its rows as
// text, or its error (the server's number, or "connection" for a connection obroute or
// go-sql-driver reports gone).
type outcome struct {
	cols []string
	rows [][]string
	err  string
}

func (oc outcome) String() string {
	if oc.err != "" {
		return "error " + oc.err
	}
	if len(oc.rows) == 0 {
		return "[]"
	}
	return fmt.Sprint(oc.cols, oc.rows)
}

// run runs q on c and reads all it answers.
func run(c *sql.Conn, q string) (outcome, error) {
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return outcome{err: errClass(err)}, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	types, _ := rows.ColumnTypes()
	var out outcome
	for i, c := range cols {
		out.cols = append(out.cols, c+":"+types[i].DatabaseTypeName())
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return outcome{err: errClass(err)}, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out.rows = append(out.rows, row)
	}
	if err := rows.Err(); err != nil {
		return outcome{err: errClass(err)}, err
	}
	return out, nil
}

// errClass names an error for comparison: the server's number, or "connection".
func errClass(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprint(me.Number)
	}
	return "connection"
}

// both runs q on obroute and on the one server and fails unless they answer alike.
func (p *pair) both(q string) outcome {
	p.t.Helper()
	got, gerr := run(p.ob, q)
	want, werr := run(p.ref, q)
	if got.String() != want.String() {
		p.t.Fatalf("%s:\n obroute:    %v (%v)\n one server: %v (%v)", q, got, gerr, want, werr)
	}
	return got
}

// refused runs q on obroute only and fails unless it is refused with sentinel (before anything
// of it ran: the one server does not run it either).
func (p *pair) refused(q string, sentinel error) {
	p.t.Helper()
	_, err := run(p.ob, q)
	if !errors.Is(err, sentinel) {
		p.t.Fatalf("%s: err = %v, want %v", q, err, sentinel)
	}
	p.t.Logf("%s: refused: %v", q, err)
}

// samePlacement fails unless each table holds on its backend exactly the one server's rows, and
// nothing on the other backend.
func (o *oneServer) samePlacement(t *testing.T) {
	t.Helper()
	for _, table := range oneServerTables {
		home, other := o.hot, o.cold
		if table == "audit_log" {
			home, other = o.cold, o.hot
		}
		want := tableRows(t, o.one, table)
		if got := tableRows(t, home, table); !slices.Equal(got, want) {
			t.Errorf("%s on backend %s: %v; the one server holds %v", table, home.Name, got, want)
		}
		if got := tableRows(t, other, table); len(got) > 0 {
			t.Errorf("%s on backend %s, which is not its backend: %v", table, other.Name, got)
		}
	}
}

// tableRows lists the rows of table on b, in id order, as text.
func tableRows(t *testing.T, b *sqltest.Backend, table string) []string {
	t.Helper()
	rows, err := b.DB.Query("SELECT id, COALESCE(HEX(note), 'NULL') FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int
		var note string
		if err := rows.Scan(&id, &note); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s", id, note))
	}
	return out
}

// lockedTables lists the tables of b's database that some session holds locked (SHOW OPEN
// TABLES … In_use), in order.
func lockedTables(t *testing.T, b *sqltest.Backend) []string {
	t.Helper()
	var db string
	if err := b.DB.QueryRow("SELECT DATABASE()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	rows, err := b.DB.Query("SHOW OPEN TABLES FROM `" + db + "` WHERE In_use > 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var database, table string
		var inUse, nameLocked int
		if err := rows.Scan(&database, &table, &inUse, &nameLocked); err != nil {
			t.Fatal(err)
		}
		out = append(out, table)
	}
	slices.Sort(out)
	return out
}

// sameLocks fails unless the tables locked on the backends are those locked on the one server.
func (o *oneServer) sameLocks(t *testing.T) {
	t.Helper()
	want := lockedTables(t, o.one)
	got := append(lockedTables(t, o.hot), lockedTables(t, o.cold)...)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("tables locked on the backends: %v; on the one server: %v", got, want)
	}
}

// steps runs each statement of a script on both sides (see both); a line "!ERR q" expects obroute
// to refuse q with err, which the one server does not run.
func (p *pair) steps(script string, refusals map[string]error) {
	p.t.Helper()
	for _, q := range strings.Split(strings.TrimSpace(script), "\n") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		if name, rest, ok := strings.Cut(q, " "); ok && strings.HasPrefix(name, "!") {
			p.refused(rest, refusals[name[1:]])
			continue
		}
		p.both(q)
	}
}
