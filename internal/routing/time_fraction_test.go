package routing

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// An INSERT with a fraction of a second in a table's last second goes to the table that holds
// the value as the server stores it: kept whole by a column of enough precision, truncated or
// rounded by the server's rule and the session's sql_mode; refused where either is unknown.
func TestInsertFractionByColumnAndSQLMode(t *testing.T) {
	const last = "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.999999')"
	const half = "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.5')"
	mode := func(v string) *SessionState {
		return &SessionState{SQLMode: SessionSQLMode{Set: true, Known: true, Value: v}}
	}
	cases := []struct {
		name    string
		flavor  Flavor
		mode    string // the backend's default sql_mode
		digits  int    // -1: the column's precision is unknown
		sess    *SessionState
		sql     string
		args    []any
		table   string // "" : refused
		stored  string // the value as stored, when the route explains it
		refusal string
	}{
		{name: "DATETIME(6) keeps the value", flavor: FlavorMariaDB, digits: 6, sql: last, table: "orders_202501"},
		{name: "DATETIME(6) on an unknown server keeps the value", flavor: FlavorUnknown, digits: 6, sql: last, table: "orders_202501"},
		{name: "DATETIME(1) keeps .5", flavor: FlavorMySQL, digits: 1, sql: half, table: "orders_202501"},
		{name: "MariaDB truncates", flavor: FlavorMariaDB, mode: "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", sql: last, table: "orders_202501", stored: "2025-01-31 23:59:59"},
		{name: "MariaDB with TIME_ROUND_FRACTIONAL rounds", flavor: FlavorMariaDB, mode: "STRICT_TRANS_TABLES,TIME_ROUND_FRACTIONAL", sql: last, table: "orders_202502", stored: "2025-02-01 00:00:00"},
		{name: "MariaDB, the session sets TIME_ROUND_FRACTIONAL", flavor: FlavorMariaDB, sess: mode("time_round_fractional"), sql: last, table: "orders_202502"},
		{name: "MariaDB, the session clears TIME_ROUND_FRACTIONAL", flavor: FlavorMariaDB, mode: "TIME_ROUND_FRACTIONAL", sess: mode(""), sql: last, table: "orders_202501"},
		{name: "MySQL rounds", flavor: FlavorMySQL, mode: "STRICT_TRANS_TABLES", sql: half, table: "orders_202502"},
		{name: "MySQL rounds down below the half", flavor: FlavorMySQL, sql: "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.499999')", table: "orders_202501"},
		{name: "MySQL with TIME_TRUNCATE_FRACTIONAL truncates", flavor: FlavorMySQL, mode: "TIME_TRUNCATE_FRACTIONAL", sql: half, table: "orders_202501"},
		{name: "DATETIME(3) on MySQL rounds to the millisecond", flavor: FlavorMySQL, digits: 3, sql: "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.9994')", table: "orders_202501"},
		{name: "DATETIME(3) on MySQL rounds into the next table", flavor: FlavorMySQL, digits: 3, sql: "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.9995')", table: "orders_202502"},
		{name: "a time.Time argument, truncated", flavor: FlavorMariaDB, sql: "insert into orders (id, order_time) values (1, ?)", args: []any{day("2025-01-31 23:59:59.7")}, table: "orders_202501"},
		{name: "a string argument, rounded", flavor: FlavorMySQL, sql: "insert into orders (id, order_time) values (1, ?)", args: []any{"2025-01-31 23:59:59.7"}, table: "orders_202502"},
		{name: "unknown server", flavor: FlavorUnknown, sql: last, refusal: "between '2025-01-31 23:59:59.999999' and '2025-02-01 00:00:00'"},
		{name: "unknown precision", flavor: FlavorMariaDB, digits: -1, sql: last, refusal: "write the time with whole seconds"},
		{name: "sql_mode set to a value obroute could not read", flavor: FlavorMariaDB, sess: &SessionState{SQLMode: SessionSQLMode{Set: true}}, sql: last, refusal: "SET sql_mode to a literal"},
		{name: "a fraction below the microsecond", flavor: FlavorMariaDB, sql: "insert into orders (id, order_time) values (1, ?)", args: []any{day("2025-01-31 23:59:59").Add(999999999)}, refusal: "write the time with whole seconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := standard(t)
			f.r.SetBackendServer("hot", c.flavor, c.mode, "")
			if c.digits >= 0 {
				precisions(f.r, map[string]int{"orders_202501": c.digits, "ORDERS_202502": c.digits})
			}
			in := Input{Session: c.sess}
			p, err := f.route(c.sql, args(c.args...), in)
			if c.table == "" {
				if !errors.Is(err, ErrNoTimeRange) || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("error %v, want ErrNoTimeRange saying %q", err, c.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range p.Targets {
				got = append(got, tg.Tables...)
			}
			if !reflect.DeepEqual(got, []string{c.table}) {
				t.Errorf("tables %v, want %s", got, c.table)
			}
			if c.stored != "" && !slices.ContainsFunc(p.Prompts, func(s string) bool { return strings.Contains(s, "is stored as '"+c.stored+"'") }) {
				t.Errorf("prompts %q, want one saying the value is stored as %s", p.Prompts, c.stored)
			}
		})
	}
}

// The precision of the table the row goes to decides, not the other tables': a value no table
// holds as it would store it is refused.
func TestInsertFractionUsesTheOwnersPrecision(t *testing.T) {
	f := standard(t)
	f.r.SetBackendServer("hot", FlavorMySQL, "", "")
	precisions(f.r, map[string]int{"orders_202501": 0, "orders_202502": 6})
	_, err := f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.7')", nil, Input{})
	if !errors.Is(err, ErrNoTimeRange) || !strings.Contains(err.Error(), "orders_202501 stores as '2025-02-01 00:00:00'") || !strings.Contains(err.Error(), "write the time at the column's precision") {
		t.Errorf("error %v, want ErrNoTimeRange: DATETIME(0) of orders_202501 rounds the value up to February, DATETIME(6) of orders_202502 keeps it in January", err)
	}
	precisions(f.r, map[string]int{"orders_202501": 6, "orders_202502": 0})
	_, err = f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.7')", nil, Input{})
	if !errors.Is(err, ErrNoTimeRange) || !strings.Contains(err.Error(), "orders_202502 would store the value as '2025-02-01 00:00:00' and orders_202501 as '2025-01-31 23:59:59.7'") {
		t.Errorf("error %v, want ErrNoTimeRange: DATETIME(0) of orders_202502 would hold the value rounded, DATETIME(6) of orders_202501 as written", err)
	}
	precisions(f.r, map[string]int{"orders_202501": 6, "orders_202502": 6})
	p, err := f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.7')", nil, Input{})
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_202501"}) {
		t.Errorf("with one precision: %v, %v; want orders_202501", p, err)
	}
}

// A table whose column was never read could hold the value too, rounded: refused.
func TestInsertFractionWithAnUnreadNeighbour(t *testing.T) {
	f := standard(t)
	f.r.SetBackendServer("hot", FlavorMariaDB, "", "")
	precisions(f.r, map[string]int{"orders_202501": 0})
	_, err := f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.5')", nil, Input{})
	if !errors.Is(err, ErrNoTimeRange) || !strings.Contains(err.Error(), "orders_202502, whose shard-key column obroute has not read") {
		t.Errorf("error %v, want ErrNoTimeRange naming orders_202502", err)
	}
	precisions(f.r, map[string]int{"orders_202502": 0})
	p, err := f.route("insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.5')", nil, Input{})
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_202501"}) {
		t.Errorf("with both read: %v, %v; want orders_202501 (truncated)", p, err)
	}
}

func TestServerFlavor(t *testing.T) {
	cases := []struct {
		version, comment string
		want             Flavor
	}{
		{"11.4.2-MariaDB-log", "mariadb.org binary distribution", FlavorMariaDB},
		{"10.6.18-MariaDB-0ubuntu0.22.04.1", "Ubuntu 22.04", FlavorMariaDB},
		{"8.0.36", "MySQL Community Server - GPL", FlavorMySQL},
		{"5.7.44-log", "MySQL Community Server (GPL)", FlavorMySQL},
		{"8.0.35-27", "Percona Server (GPL), Release 27, Revision 2f8eeab2", FlavorMySQL},
		{"5.6.51", "MySQL Community Server (GPL)", FlavorUnknown},
		{"8.0.31", "Dolt", FlavorUnknown},
	}
	for _, c := range cases {
		if got := ServerFlavor(c.version, c.comment); got != c.want {
			t.Errorf("ServerFlavor(%q, %q) = %d, want %d", c.version, c.comment, got, c.want)
		}
	}
}
