package routing

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/metadata"
)

// intColumn, decimalColumn, binColumn, … are the definitions of test tables' columns, as
// information_schema.COLUMNS of MariaDB describes them.
func intColumn(name string) TableColumn {
	return TableColumn{Name: name, DataType: "int", ColumnType: "int(11)", Precision: 10, Default: ptr("NULL")}
}

func decimalColumn(name string, prec, scale int) TableColumn {
	return TableColumn{Name: name, DataType: "decimal", ColumnType: "decimal", Precision: prec, Scale: scale, Default: ptr("NULL")}
}

func textColumn(name, dataType, collation string, length int64) TableColumn {
	return TableColumn{Name: name, DataType: dataType, ColumnType: dataType, MaxLength: length, Collation: collation, Default: ptr("NULL")}
}

func ptr(s string) *string { return &s }

// ordersLog is the definition of orders_log, the shadow table of the test routers: id, user_id
// (the algorithms' column), note.
var ordersLog = TableColumns{Columns: []TableColumn{
	{Name: "id", DataType: "int", ColumnType: "int(11)", Precision: 10},
	intColumn("user_id"),
	textColumn("note", "varchar", "utf8mb4_general_ci", 64),
}}

// defineShadowTables gives r the definition of orders_log on every backend of the test routers,
// as the connector reads it from information_schema.
func defineShadowTables(t testing.TB, r *Router) {
	t.Helper()
	for _, b := range []string{"hot", "cold", "shadow_hot", "shadow_cold"} {
		r.SetTableDefinition(b, "", "orders_log", ordersLog)
	}
}

// shadowRouter has a shadow table per column type, each with a value_match algorithm for every
// operation on user_id (shadow value 0, or "0" for strings), t_rx with a regex_match algorithm,
// and plain tables elsewhere; hot maps to shadow_hot.
func shadowRouter(t testing.TB) *Router {
	t.Helper()
	var algs []shadow.Algorithm
	var tables []shadow.Table
	for _, tb := range []string{"t_int", "t_dec", "t_str", "t_char", "t_ci", "t_def0", "t_rx", "t_rxp"} {
		var names []string
		for _, op := range []string{shadow.OpInsert, shadow.OpUpdate, shadow.OpDelete, shadow.OpSelect} {
			a := shadow.Algorithm{Name: tb + "_" + op, Kind: shadow.KindValueMatch, Column: "user_id", Operation: op, Values: []string{"0"}}
			if strings.HasPrefix(tb, "t_rx") {
				a.Kind, a.Values, a.Regex = shadow.KindRegexMatch, nil, "test_[0-9]+"
			}
			algs = append(algs, a)
			names = append(names, a.Name)
		}
		tables = append(tables, shadow.Table{Name: tb, Algorithms: names})
	}
	r, err := New(Config{
		Settings: &config.Config{
			Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "shadow_hot", Role: config.RoleShadow}},
			Default:  "hot",
		},
		Shadow: &shadow.Rule{Shadow: config.Shadow{
			Mappings:   []shadow.Mapping{{Production: "hot", Shadow: "shadow_hot"}},
			Algorithms: algs,
			Tables:     tables,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := TableColumn{Name: "id", DataType: "int", ColumnType: "int(11)", Precision: 10}
	note := textColumn("note", "varchar", "utf8mb4_general_ci", 64)
	defs := map[string]TableColumn{
		"t_int":  intColumn("user_id"),
		"t_dec":  decimalColumn("user_id", 10, 2),
		"t_str":  textColumn("user_id", "varchar", "utf8mb4_bin", 20),
		"t_char": textColumn("user_id", "char", "utf8mb4_bin", 20),
		"t_ci":   textColumn("user_id", "varchar", "utf8mb4_general_ci", 20),
		"t_rx":   textColumn("user_id", "varbinary", "", 20),
		"t_rxp":  textColumn("user_id", "varchar", "utf8mb4_bin", 20),
	}
	def0 := intColumn("user_id")
	def0.Default = ptr("0")
	defs["t_def0"] = def0
	for tb, col := range defs {
		for _, b := range []string{"hot", "shadow_hot"} {
			r.SetTableDefinition(b, "", tb, TableColumns{Columns: []TableColumn{id, col, note}})
		}
	}
	return r
}

// The rows a statement writes or reads are shadow rows when their column holds a shadow value as
// the server stores and compares it, whatever the spelling of the value; a statement whose rows
// are partly shadow rows is refused (mixed), and so is one whose values obroute cannot read
// exactly (unread). The server's own answers for these spellings are checked by
// TestShadowValuesAsTheServerReadsThem.
func TestShadowColumnValues(t *testing.T) {
	r := shadowRouter(t)
	for _, tc := range []struct {
		sql  string
		args []any
		want string // shadow, production, mixed, unread, no shadow backend, conflict
	}{
		// INSERT: the value as an INT column stores it.
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 7)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, '0')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ' 0')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, '00')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, '0e0')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0.0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0.4)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0.5)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, '0.5')", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0e0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0.5e0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 1.5e0)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, -0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, +0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, -(0))", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0x0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0x41)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, b'0')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 1 - 1)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 3 * 0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, FALSE)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, TRUE)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, NULL)", want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 'abc')", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, X'00')", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ABS(0))", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 9223372036854775807)", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", args: []any{int64(0)}, want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", args: []any{"0"}, want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", args: []any{float64(0)}, want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", args: []any{0.5}, want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", args: []any{nil}, want: "production"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, ?)", want: "unread"},
		{sql: "INSERT INTO t_int VALUES (1, 0, 'x')", want: "shadow"},
		{sql: "INSERT INTO t_int VALUES (1, 7, 'x')", want: "production"},
		{sql: "INSERT INTO t_int VALUES (1, 0)", want: "unread"},
		{sql: "INSERT INTO t_int SET id = 1, user_id = 0", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0), (2, 0)", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0), (2, 7)", want: "mixed"},
		{sql: "INSERT INTO t_int (user_id, id) VALUES (7, 0)", want: "production"},
		{sql: "REPLACE INTO t_int (id, user_id) VALUES (1, '0')", want: "shadow"},
		{sql: "REPLACE INTO t_int VALUES (1, 5, 'x')", want: "production"},
		{sql: "INSERT INTO t_int (id, note) VALUES (1, 'x')", want: "production"},
		{sql: "INSERT INTO t_def0 (id, note) VALUES (1, 'x')", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) SELECT 1, 0", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) SELECT id, 0 FROM items", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) SELECT 1, 0 UNION ALL SELECT 2, 7", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) SELECT 1, 0x30 UNION ALL SELECT 2, 5", want: "unread"}, // the server stores 0: '0'
		{sql: "INSERT INTO t_int (id, user_id) SELECT 1, 0x30", want: "production"},                   // 48
		{sql: "INSERT INTO t_int (id, user_id) SELECT id, user_id FROM items", want: "unread"},
		{sql: "INSERT INTO t_int SELECT * FROM items", want: "unread"},
		{sql: "INSERT INTO items SELECT * FROM t_int WHERE user_id = 0", want: "unread"},
		{sql: "INSERT INTO t_int (id, user_id) SELECT id + 9, t_int.user_id FROM t_int WHERE user_id = 0", want: "unread"},
		{sql: "LOAD DATA INFILE 'rows.csv' INTO TABLE t_int", want: "unread"},
		{sql: "/* shadow */ LOAD DATA INFILE 'rows.csv' INTO TABLE t_int", want: "unread"}, // the rows of a LOAD are not read, hinted or not,
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0) ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), note = 'x'", want: "shadow"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 0) ON DUPLICATE KEY UPDATE user_id = 5", want: "mixed"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 7) ON DUPLICATE KEY UPDATE user_id = 0", want: "mixed"},
		{sql: "INSERT INTO t_int (id, user_id) VALUES (1, 7) ON DUPLICATE KEY UPDATE user_id = user_id + 1", want: "unread"},

		// WHERE: the rows the condition reaches, compared as the server compares an INT column.
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE 0 = user_id", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE (user_id) = '0'", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0e0 AND id > 3", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id IN (0)", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id IN (0, 1)", want: "mixed"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0 OR user_id = -0", want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0 OR id = 1", want: "mixed"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 7 OR id = 1", want: "mixed"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0 OR user_id IS NULL", want: "mixed"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = 0.4", want: "production"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = '0abc'", want: "unread"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id + 0 = 0", want: "unread"},
		{sql: "UPDATE t_int SET note = 'x' WHERE id = 3", want: "production"},
		{sql: "UPDATE t_int SET note = 'x'", want: "production"},
		{sql: "UPDATE t_int SET user_id = 0 WHERE user_id = 0", want: "shadow"},
		{sql: "UPDATE t_int SET user_id = user_id WHERE user_id = 0", want: "shadow"},
		{sql: "UPDATE t_int SET user_id = 5 WHERE user_id = 0", want: "mixed"},
		{sql: "UPDATE t_int SET user_id = 0 WHERE id = 3", want: "mixed"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = ?", args: []any{int64(0)}, want: "shadow"},
		{sql: "UPDATE t_int SET note = 'x' WHERE user_id = ?", args: []any{int64(9)}, want: "production"},
		{sql: "DELETE FROM t_int WHERE user_id > 5", want: "production"},
		{sql: "DELETE FROM t_int WHERE user_id <> 0", want: "production"},
		{sql: "DELETE FROM t_int WHERE NOT (user_id = 0)", want: "production"},
		{sql: "DELETE FROM t_int WHERE NOT (user_id <> 0)", want: "shadow"},
		{sql: "DELETE FROM t_int WHERE user_id NOT IN (1, 2)", want: "mixed"},
		{sql: "DELETE FROM t_int WHERE user_id NOT IN (0, 2)", want: "production"},
		{sql: "DELETE FROM t_int WHERE user_id BETWEEN 1 AND 5", want: "production"},
		{sql: "DELETE FROM t_int WHERE user_id BETWEEN -1 AND 1", want: "mixed"},
		{sql: "DELETE FROM t_int WHERE user_id IS NULL", want: "production"},
		{sql: "DELETE FROM t_int WHERE user_id <=> 0", want: "shadow"},
		{sql: "DELETE FROM t_int WHERE user_id IN (SELECT user_id FROM items)", want: "unread"},
		{sql: "SELECT * FROM t_int WHERE user_id = 0", want: "shadow"},
		{sql: "SELECT * FROM t_int o JOIN items i ON i.id = o.id WHERE o.user_id = 0", want: "shadow"},
		{sql: "SELECT * FROM t_int o JOIN items i ON i.id = o.id AND o.user_id = 0", want: "shadow"},
		{sql: "SELECT * FROM t_int o JOIN items i ON i.id = o.id WHERE i.user_id = 0", want: "production"},
		{sql: "SELECT * FROM t_int o JOIN items i ON i.id = o.id WHERE user_id = 0", want: "unread"},
		{sql: "SELECT * FROM t_int o LEFT JOIN items i ON o.user_id = 0", want: "unread"},
		{sql: "SELECT * FROM items WHERE id IN (SELECT id FROM t_int WHERE user_id = 0)", want: "unread"},

		// DECIMAL(10,2): stored rounded to two digits.
		{sql: "INSERT INTO t_dec (id, user_id) VALUES (1, 0.001)", want: "shadow"},
		{sql: "INSERT INTO t_dec (id, user_id) VALUES (1, 0.005)", want: "production"},
		{sql: "INSERT INTO t_dec (id, user_id) VALUES (1, '0.00')", want: "shadow"},
		{sql: "UPDATE t_dec SET note = 'x' WHERE user_id = 0.001", want: "production"},
		{sql: "UPDATE t_dec SET note = 'x' WHERE user_id = 0.00", want: "shadow"},

		// Strings of a _bin collation: bytes, trailing spaces not counted (PAD SPACE).
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, '0')", want: "shadow"},
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, '0 ')", want: "shadow"},
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, '00')", want: "production"},
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, 0)", want: "shadow"},
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, 0.0)", want: "production"},
		{sql: "INSERT INTO t_str (id, user_id) VALUES (1, 0x30)", want: "shadow"},
		{sql: "UPDATE t_str SET note = 'x' WHERE user_id = '0'", want: "shadow"},
		{sql: "UPDATE t_str SET note = 'x' WHERE user_id = 0", want: "unread"},
		{sql: "UPDATE t_str SET note = 'x' WHERE user_id > '0'", want: "production"},
		{sql: "UPDATE t_str SET note = 'x' WHERE user_id > 'a'", want: "unread"},
		{sql: "INSERT INTO t_char (id, user_id) VALUES (1, '0   ')", want: "shadow"},
		{sql: "INSERT INTO t_ci (id, user_id) VALUES (1, '0')", want: "unread"},
		{sql: "UPDATE t_ci SET note = 'x' WHERE id = 1", want: "production"},

		// regex_match: the stored text matched in full.
		{sql: "INSERT INTO t_rx (id, user_id) VALUES (1, 'test_17')", want: "shadow"},
		{sql: "INSERT INTO t_rx (id, user_id) VALUES (1, 'test_17x')", want: "production"},
		{sql: "DELETE FROM t_rx WHERE user_id IN ('test_1', 'test_2')", want: "shadow"},
		{sql: "DELETE FROM t_rx WHERE user_id IN ('test_1', 'prod')", want: "mixed"},
		{sql: "DELETE FROM t_rx WHERE user_id <> 'prod'", want: "unread"},
		{sql: "DELETE FROM t_rxp WHERE user_id IN ('test_1')", want: "unread"}, // PAD SPACE: 'test_1 ' too

		// Hints: a value the rule reads never contradicts a hint silently.
		{sql: "/* shadow */ INSERT INTO t_int (id, user_id) VALUES (1, 7)", want: "no shadow backend"},
		{sql: "/* shadow */ INSERT INTO t_int (id, user_id) VALUES (1, 0)", want: "shadow"},
		{sql: "/*+ OBROUTE(shadow=false) */ INSERT INTO t_int (id, user_id) VALUES (1, 0)", want: "conflict"},
		{sql: "/*+ OBROUTE(shadow=false) */ INSERT INTO t_int (id, user_id) VALUES (1, ABS(0))", want: "production"},
	} {
		name := tc.sql
		if tc.args != nil {
			name += fmt.Sprint(tc.args)
		}
		t.Run(name, func(t *testing.T) {
			var args []driver.NamedValue
			for i, a := range tc.args {
				args = append(args, driver.NamedValue{Ordinal: i + 1, Value: a})
			}
			if tc.args == nil && strings.Contains(tc.sql, "?") {
				args = nil
			}
			p, err := r.Route(Input{Statement: r.Analyze(tc.sql), Args: args, Session: &SessionState{}})
			got := ""
			switch {
			case err == nil && p.Shadow && p.Targets[0].Backend == "shadow_hot":
				got = "shadow"
			case err == nil && !p.Shadow && p.Targets[0].Backend == "hot":
				got = "production"
			case errors.Is(err, ErrMixedShadow):
				got = "mixed"
			case errors.Is(err, ErrUnreadable):
				got = "unread"
			case errors.Is(err, ErrNoShadowBackend):
				got = "no shadow backend"
			case errors.Is(err, hint.ErrHintConflict):
				got = "conflict"
			}
			if got != tc.want {
				t.Fatalf("got %q (err %v), want %s", got, err, tc.want)
			}
		})
	}
}

// The router asks for the definitions it reads values by, shadow side first; a statement whose
// rows are shadow rows there never asks for production's.
func TestShadowDefinitionsAreAskedForSideBySide(t *testing.T) {
	r := shadowRouter(t)
	r.ForgetTableDefinitions("hot", []string{"t_int"})
	r.ForgetTableDefinitions("shadow_hot", []string{"t_int"})
	route := func(sql string) error {
		_, err := r.Route(Input{Statement: r.Analyze(sql), Session: &SessionState{}})
		return err
	}
	var need *ColumnsNeeded
	if err := route("INSERT INTO t_int (id, user_id) VALUES (1, 0)"); !errors.As(err, &need) || need.Backend != "shadow_hot" || need.Table != "t_int" {
		t.Fatalf("first route: %v, want the definition of t_int on shadow_hot asked for", err)
	}
	def := TableColumns{Columns: []TableColumn{{Name: "id", DataType: "int"}, intColumn("user_id")}}
	r.SetTableDefinition("shadow_hot", "", "t_int", def)
	if err := route("INSERT INTO t_int (id, user_id) VALUES (1, 0)"); err != nil {
		t.Fatalf("shadow rows with the shadow side's definition: %v, want routed without production's", err)
	}
	if err := route("INSERT INTO t_int (id, user_id) VALUES (1, 7)"); !errors.As(err, &need) || need.Backend != "hot" {
		t.Fatalf("production rows: %v, want the definition on hot asked for", err)
	}
	// Production's definition orders the columns otherwise: a row that is a shadow row there
	// and not on the shadow side is refused.
	r.SetTableDefinition("hot", "", "t_int", TableColumns{Columns: []TableColumn{intColumn("user_id"), {Name: "id", DataType: "int"}}})
	if err := route("INSERT INTO t_int VALUES (0, 7)"); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "give both the same definition") {
		t.Fatalf("definitions that disagree: %v, want refused", err)
	}
	if err := route("INSERT INTO t_int VALUES (7, 0)"); err != nil {
		t.Fatalf("shadow rows by the shadow side's definition: %v", err)
	}
	if err := route("INSERT INTO other.t_int (id, user_id) VALUES (1, 0)"); !errors.As(err, &need) || need.Schema != "other" {
		t.Fatalf("qualified table: %v, want its schema's definition asked for", err)
	}
	r.SetTableDefinition("shadow_hot", "other", "t_int", TableColumns{})
	if err := route("INSERT INTO other.t_int (id, user_id) VALUES (1, 0)"); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "has no table t_int in database other") {
		t.Fatalf("missing table: %v, want refused", err)
	}
}

// Shadow traffic on a time-sharded table is routed by the shadow side's shard metadata, and the
// sub-queries of a split read that reach one shadow backend (hot and cold mapped to it) are one
// UNION ALL, as production's of one backend.
func TestShadowTimeRoutingUsesTheShadowSide(t *testing.T) {
	now := day("2025-03-15 12:00:00")
	prodSnap, err := metadata.NewSnapshot(monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), now)
	if err != nil {
		t.Fatal(err)
	}
	// The shadow copy holds only the last six months.
	shadowSnap, err := metadata.NewSnapshot(monthlyTables("2024-10-01", "2025-03-01", "2025-01-01"), now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{
		Settings: &config.Config{
			Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}, {Name: "shadow", Role: config.RoleShadow}},
			Default:  "hot",
		},
		Shadow: &shadow.Rule{Shadow: config.Shadow{
			Mappings:         []shadow.Mapping{{Production: "hot", Shadow: "shadow"}, {Production: "cold", Shadow: "shadow"}},
			Algorithms:       []shadow.Algorithm{{Name: "h", Kind: shadow.KindHint}},
			DefaultAlgorithm: "h",
		}},
		Time: &TimeConfig{
			Tables:         []config.TimeTable{ordersTable()},
			Snapshot:       func() *metadata.Snapshot { return prodSnap },
			ShadowSnapshot: func() *metadata.Snapshot { return shadowSnap },
			Clock:          func() time.Time { return now },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each side's shard-key columns, as the connector reads them from its backends.
	cols := map[string]ShardKeyColumn{}
	for _, tb := range monthlyTables("2024-07-01", "2025-03-01", "2025-01-01") {
		cols[tb.Name] = ShardKeyColumn{Type: ShardKeyDatetime, DataType: "datetime"}
	}
	r.SetShardKeyColumns(cols)
	const q = "SELECT id FROM orders WHERE order_time >= '2024-08-15' ORDER BY id"
	// What was read of production's backends does not route shadow traffic.
	if _, err := r.Route(Input{Statement: r.Analyze(q), Hints: hint.Set{Shadow: hint.ShadowOn}, Session: &SessionState{}}); !errors.Is(err, ErrShardKeyType) {
		t.Fatalf("shadow route with only production's columns read: %v, want ErrShardKeyType", err)
	}
	r.TimeFacts(true).SetShardKeyColumns(cols)
	route := func(h hint.Set, sess *SessionState) *Plan {
		t.Helper()
		p, err := r.Route(Input{Statement: r.Analyze(q), Hints: h, Session: sess})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := route(hint.Set{}, &SessionState{})
	if len(p.Targets) != 2 || p.Targets[0].Backend != "cold" || p.Targets[1].Backend != "hot" || !strings.Contains(p.Targets[0].SQL, "orders_202408") {
		t.Fatalf("production plan %+v, want hot and cold sub-queries over production's tables", p.Targets)
	}
	for _, sess := range []*SessionState{{}, {InTransaction: true, TxBackend: "shadow", TxShadow: true}} {
		h := hint.Set{Shadow: hint.ShadowOn}
		if sess.InTransaction {
			h = hint.Set{}
		}
		p = route(h, sess)
		if !p.Shadow || len(p.Targets) != 1 || p.Targets[0].Backend != "shadow" {
			t.Fatalf("shadow plan %+v, want one statement on shadow", p.Targets)
		}
		sql := p.Targets[0].SQL
		if strings.Contains(sql, "orders_202408") || strings.Count(sql, "union all") != 5 || strings.HasPrefix(sql, coldPrefix) {
			t.Errorf("shadow statement %q: want one UNION ALL of the shadow side's six tables, without the cold tag (it reads hot tables too)", sql)
		}
	}
	// An INSERT of shadow traffic goes to the table of the shadow side.
	if _, err := r.Route(Input{Statement: r.Analyze("INSERT INTO orders (id, order_time) VALUES (1, '2024-08-20')"), Hints: hint.Set{Shadow: hint.ShadowOn}, Session: &SessionState{}}); !errors.Is(err, ErrNoShardTable) {
		t.Errorf("shadow INSERT before the shadow side's first table: %v, want ErrNoShardTable", err)
	}
}

// A column algorithm on a time-sharded table is refused with the configuration: the side whose
// shard metadata routes a statement must be known before it is routed.
func TestShadowColumnAlgorithmOnTimeTableIsRefused(t *testing.T) {
	_, err := New(Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "shadow_hot", Role: config.RoleShadow}}, Default: "hot"},
		Shadow: &shadow.Rule{Shadow: config.Shadow{
			Mappings:   []shadow.Mapping{{Production: "hot", Shadow: "shadow_hot"}},
			Algorithms: []shadow.Algorithm{{Name: "v", Kind: shadow.KindValueMatch, Column: "user_id", Operation: shadow.OpInsert, Values: []string{"0"}}},
			Tables:     []shadow.Table{{Name: "orders", Algorithms: []string{"v"}}},
		}},
		Time: &TimeConfig{Tables: []config.TimeTable{ordersTable()}, Snapshot: func() *metadata.Snapshot { return nil }},
	})
	if !errors.Is(err, ErrTimeConfig) || !strings.Contains(err.Error(), "give the table a hint algorithm") {
		t.Fatalf("New = %v, want ErrTimeConfig saying to use a hint algorithm", err)
	}
}

// Once the router has the shadow backends' views (its connector reads views), an unhinted
// statement the rule leaves to production asks for the views of the production backend it runs
// on, and is refused when it names one (the view may reach a shadow table); shadow traffic
// never asks for production's views.
func TestShadowProductionViewsAreAskedForProductionTrafficOnly(t *testing.T) {
	r := shadowRouter(t)
	route := func(sql string, hints hint.Set) error {
		_, err := r.Route(Input{Statement: r.Analyze(sql), Hints: hints, Session: &SessionState{}})
		return err
	}
	if err := route("INSERT INTO v_prod (id, user_id) VALUES (1, 0)", hint.Set{}); err != nil {
		t.Fatalf("without the shadow side's views: %v, want routed (the connector reads no views)", err)
	}
	r.SetShadowViews(nil)
	var need *ColumnsNeeded
	if err := route("INSERT INTO v_prod (id, user_id) VALUES (1, 0)", hint.Set{}); !errors.As(err, &need) || !need.Views || need.Backend != "hot" {
		t.Fatalf("first route: %v, want the views of hot asked for", err)
	}
	if err := route("INSERT INTO t_int (id, user_id) VALUES (1, 0)", hint.Set{}); err != nil {
		t.Errorf("shadow rows: %v, want shadow traffic routed without production's views", err)
	}
	// Hinted (and refused here: the rule has no default hint algorithm), nothing is asked.
	if err := route("/* shadow */ INSERT INTO v_prod (id, user_id) VALUES (1, 0)", hint.Set{}); errors.As(err, &need) {
		t.Errorf("hinted shadow traffic: %v, want production's views not asked for", err)
	}
	r.SetViews("hot", []string{"V_Prod"})
	for _, q := range []string{
		"INSERT INTO v_prod (id, user_id) VALUES (1, 0)",
		"UPDATE v_prod SET note = 'x' WHERE user_id = 0",
		"SELECT * FROM items JOIN v_prod USING (id)",
		"SET STATEMENT max_statement_time=1 FOR DELETE FROM v_prod WHERE user_id = 0",
	} {
		if err := route(q, hint.Set{}); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "view v_prod of backend hot") {
			t.Errorf("%s: %v, want refused for the view", q, err)
		}
	}
	for _, q := range []string{"INSERT INTO items (id, user_id) VALUES (1, 0)", "SELECT * FROM t_int WHERE user_id = 7"} {
		if err := route(q, hint.Set{}); err != nil {
			t.Errorf("%s: %v, want routed to production", q, err)
		}
	}
	if err := route("INSERT INTO v_prod (id, user_id) VALUES (1, 0)", hint.Set{Shadow: hint.ShadowOff}); err != nil {
		t.Errorf("declared production: %v, want routed", err)
	}
}

// A view of the shadow database leaves it when its definition names another database's table,
// column or function, reads a view that does, or cannot be read.
func TestShadowViewsLeavingTheirDatabase(t *testing.T) {
	got := viewsLeaving([]View{
		{Name: "v_own", Schema: "shadowdb", Definition: "select `shadowdb`.`t_order`.`id` AS `id` from `shadowdb`.`t_order`"},
		{Name: "v_prod", Schema: "shadowdb", Definition: "select `prod`.`t_order`.`id` AS `id` from `prod`.`t_order`"},
		{Name: "V_Nested", Schema: "shadowdb", Definition: "select `v`.`id` AS `id` from `shadowdb`.`v_prod` `v`"},
		{Name: "v_func", Schema: "shadowdb", Definition: "select `prod`.`f`(1) AS `x`"},
		{Name: "v_hidden", Schema: "shadowdb", Definition: ""},
		{Name: "v_over_own", Schema: "shadowdb", Definition: "select `id` AS `id` from `v_own`"},
	})
	for name, want := range map[string]string{"v_prod": "database prod", "v_nested": "view v_prod", "v_func": "database prod", "v_hidden": "not readable"} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: %q, want it leaving (%s)", name, got[name], want)
		}
	}
	for _, name := range []string{"v_own", "v_over_own"} {
		if why, ok := got[name]; ok {
			t.Errorf("%s: leaves (%s), want it kept within its database", name, why)
		}
	}
}
