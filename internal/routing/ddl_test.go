package routing

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
)

// The DDL forms of MariaDB's manual (ALTER TABLE, CREATE/DROP INDEX, CREATE/DROP/RENAME TABLE,
// TRUNCATE, the table maintenance statements), with its own clauses: IF [NOT] EXISTS, OR
// REPLACE, ONLINE, IGNORE, WAIT n / NOWAIT, ALGORITHM= / LOCK=, index types, partition clauses.
func TestReadDDL(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		action ddlAction
		acts   []string
		others []string
	}{
		{"ALTER TABLE t ADD COLUMN c INT", ddlAlter, []string{"t"}, nil},
		{"ALTER ONLINE IGNORE TABLE IF EXISTS db.t WAIT 10 ADD COLUMN IF NOT EXISTS c INT, ALGORITHM=INPLACE, LOCK=NONE", ddlAlter, []string{"t"}, nil},
		{"ALTER TABLE `t` NOWAIT DROP COLUMN IF EXISTS c, DROP INDEX IF EXISTS i, DROP FOREIGN KEY IF EXISTS f", ddlAlter, []string{"t"}, nil},
		{"ALTER TABLE t RENAME COLUMN a TO b, RENAME INDEX i TO j, RENAME KEY k TO l", ddlAlter, []string{"t"}, nil},
		{"ALTER TABLE t RENAME TO u", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t RENAME AS db.u", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u (id) ON DELETE CASCADE", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t EXCHANGE PARTITION p WITH TABLE u", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t CONVERT PARTITION p TO TABLE u", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t CONVERT TABLE u TO PARTITION p VALUES LESS THAN (10)", ddlAlter, []string{"t"}, []string{"u"}},
		{"ALTER TABLE t ADD SYSTEM VERSIONING", ddlAlter, []string{"t"}, nil},
		{"CREATE INDEX i ON t (a)", ddlCreateIndex, []string{"t"}, nil},
		{"CREATE OR REPLACE UNIQUE INDEX IF NOT EXISTS i USING BTREE ON db.t (a(10) DESC) WAIT 3 ALGORITHM=INPLACE LOCK=NONE COMMENT 'x'", ddlCreateIndex, []string{"t"}, nil},
		{"CREATE FULLTEXT INDEX i ON t (a)", ddlCreateIndex, []string{"t"}, nil},
		{"CREATE SPATIAL INDEX i ON t (g)", ddlCreateIndex, []string{"t"}, nil},
		{"DROP INDEX IF EXISTS i ON t WAIT 5 ALGORITHM=INSTANT LOCK=DEFAULT", ddlDropIndex, []string{"t"}, nil},
		{"DROP INDEX `PRIMARY` ON `t` NOWAIT", ddlDropIndex, []string{"t"}, nil},
		{"CREATE TABLE t (id INT)", ddlCreateTable, []string{"t"}, nil},
		{"CREATE OR REPLACE TABLE IF NOT EXISTS t (id INT, u_id INT REFERENCES u(id)) WITH SYSTEM VERSIONING", ddlCreateTable, []string{"t"}, []string{"u"}},
		{"CREATE TABLE t LIKE u", ddlCreateTable, []string{"t"}, []string{"u"}},
		{"CREATE TABLE t (LIKE u)", ddlCreateTable, []string{"t"}, []string{"u"}},
		{"CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT)", ddlCreateTable, []string{"t"}, nil},
		{"DROP TABLE t", ddlDropTable, []string{"t"}, nil},
		{"DROP TEMPORARY TABLE IF EXISTS /* comment */ t, db.u WAIT 1 RESTRICT", ddlDropTable, []string{"t", "u"}, nil},
		{"RENAME TABLE t TO u", ddlRename, []string{"t"}, []string{"u"}},
		{"RENAME TABLES IF EXISTS t WAIT 2 TO u, v NOWAIT TO w", ddlRename, []string{"t", "v"}, []string{"u", "w"}},
		{"TRUNCATE t", ddlTruncate, []string{"t"}, nil},
		{"TRUNCATE TABLE db.t WAIT 3", ddlTruncate, []string{"t"}, nil},
		{"OPTIMIZE NO_WRITE_TO_BINLOG TABLE t, u WAIT 2", ddlMaintain, []string{"t", "u"}, nil},
		{"ANALYZE LOCAL TABLE t PERSISTENT FOR ALL", ddlMaintain, []string{"t"}, nil},
		{"REPAIR TABLE t QUICK EXTENDED USE_FRM", ddlMaintain, []string{"t"}, nil},
		{"CHECK TABLE t FOR UPGRADE", ddlMaintain, []string{"t"}, nil},
		// Not DDL on tables.
		{"CREATE VIEW v AS SELECT 1", 0, nil, nil},
		{"CREATE OR REPLACE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @x = 1", 0, nil, nil},
		{"DROP DATABASE d", 0, nil, nil},
		{"ANALYZE SELECT * FROM t", 0, nil, nil},
		{"ALTER DATABASE d CHARACTER SET utf8mb4", 0, nil, nil},
		{"CHECK VIEW v", 0, nil, nil},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			toks, _ := lex(tc.sql)
			d := readDDL(toks, 0)
			if tc.action == 0 {
				if d != nil {
					t.Fatalf("read as DDL on tables: %+v", d)
				}
				return
			}
			if d == nil {
				t.Fatal("not read")
			}
			names := func(refs []ddlRef) []string {
				var out []string
				for _, r := range refs {
					out = append(out, r.name)
				}
				return out
			}
			if d.action != tc.action || !reflect.DeepEqual(names(d.acts), tc.acts) || !reflect.DeepEqual(names(d.others), tc.others) {
				t.Errorf("action %d acts %v others %v, want %d %v %v", d.action, names(d.acts), names(d.others), tc.action, tc.acts, tc.others)
			}
			for _, r := range d.acts {
				if w := tc.sql[r.from:r.to]; !strings.Contains(strings.ToLower(strings.Trim(w, "`")), r.name) {
					t.Errorf("table %s written at %q", r.name, w)
				}
			}
		})
	}
}

// ddlRouter routes with audit_log statically on cold, orders time-sharded over two cold and
// two hot tables, items on the default backend.
func ddlRouter(t *testing.T) *Router {
	t.Helper()
	f := newFixture(t, ordersTable(), monthlyTables("2024-12-01", "2025-03-01", "2025-02-01"), "2025-03-15 12:00:00")
	r, err := New(Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot, MySQL: &mysql.Config{DBName: "shop"}}, {Name: "cold", Role: config.RoleCold}}, Default: "hot",
			Routes: map[string]string{"audit_log": "cold"}},
		Time: f.r.time.cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// DDL routes by the table it names, read from its words when the parser cannot read it; on a
// time-sharded table it runs on each physical table, oldest first.
func TestDDLRoutes(t *testing.T) {
	r := ddlRouter(t)
	route := func(sql string, sess *SessionState) (*Plan, error) {
		return r.Route(Input{Statement: r.Analyze(sql), Session: sess})
	}
	for _, tc := range []struct{ sql, backend string }{
		{"CREATE INDEX IF NOT EXISTS ix ON audit_log (id)", "cold"},
		{"DROP INDEX IF EXISTS ix ON audit_log", "cold"},
		{"ALTER TABLE IF EXISTS audit_log WAIT 2 ADD COLUMN IF NOT EXISTS x INT, ALGORITHM=INPLACE", "cold"},
		{"CREATE OR REPLACE TABLE audit_log (id INT)", "cold"},
		{"OPTIMIZE TABLE audit_log", "cold"},
		{"TRUNCATE TABLE audit_log WAIT 1", "cold"},
		{"CREATE INDEX IF NOT EXISTS ix ON items (id)", "hot"},
	} {
		p, err := route(tc.sql, nil)
		if err != nil || len(p.Targets) != 1 || p.Targets[0].Backend != tc.backend || p.Targets[0].SQL != tc.sql {
			t.Errorf("%s: %+v %v, want it as written on %s", tc.sql, p, err, tc.backend)
		}
	}
	physical := []string{"orders_202412", "orders_202501", "orders_202502", "orders_202503"}
	backends := []string{"cold", "cold", "hot", "hot"}
	for _, tc := range []struct{ sql, want string }{
		{"ALTER TABLE orders ADD COLUMN note VARCHAR(10)", "ALTER TABLE `%s` ADD COLUMN note VARCHAR(10)"},
		{"ALTER TABLE IF EXISTS shop.`orders` NOWAIT ADD COLUMN IF NOT EXISTS orders INT", "ALTER TABLE IF EXISTS `%s` NOWAIT ADD COLUMN IF NOT EXISTS orders INT"},
		{"CREATE INDEX IF NOT EXISTS ix ON orders (amount)", "CREATE INDEX IF NOT EXISTS ix ON `%s` (amount)"},
		{"DROP INDEX IF EXISTS ix ON orders", "DROP INDEX IF EXISTS ix ON `%s`"},
		{"/* note */ TRUNCATE orders", "/* note */ TRUNCATE `%s`"},
		{"OPTIMIZE TABLE orders", "OPTIMIZE TABLE `%s`"},
	} {
		p, err := route(tc.sql, nil)
		if err != nil || p.FanOut != "orders" || len(p.Targets) != 4 {
			t.Fatalf("%s: %+v %v, want a fan-out to 4 tables", tc.sql, p, err)
		}
		for i, target := range p.Targets {
			if want := strings.Replace(tc.want, "%s", physical[i], 1); target.SQL != want || target.Backend != backends[i] {
				t.Errorf("%s: target %d is %q on %s, want %q on %s", tc.sql, i, target.SQL, target.Backend, want, backends[i])
			}
		}
	}
	for _, sql := range []string{
		"CREATE TABLE orders (id INT)", "CREATE OR REPLACE TABLE orders (id INT)", "DROP TABLE IF EXISTS orders",
		"RENAME TABLE orders TO o", "RENAME TABLE x TO orders", "ALTER TABLE orders RENAME TO o",
		"CREATE TABLE c LIKE orders", "ALTER TABLE items ADD FOREIGN KEY (o) REFERENCES orders (id)",
		"OPTIMIZE TABLE orders, items", "ALTER TABLE orders ADD FOREIGN KEY (p) REFERENCES orders (id)",
	} {
		if _, err := route(sql, nil); !errors.Is(err, ErrLogicalTable) {
			t.Errorf("%s: %v, want ErrLogicalTable", sql, err)
		}
	}
	if p, err := route("CREATE TABLE IF NOT EXISTS orders (id INT)", nil); err != nil || !p.NoOp {
		t.Errorf("CREATE TABLE IF NOT EXISTS of the time-sharded table: %+v %v, want a statement that does nothing", p, err)
	}
	if _, err := route("ALTER TABLE orders ADD COLUMN x INT", &SessionState{InTransaction: true}); !errors.Is(err, ErrDDLInTransaction) {
		t.Errorf("in a transaction: %v", err)
	}
	// A temporary table named orders is the session's own.
	if p, err := route("CREATE TEMPORARY TABLE orders (id INT)", nil); err != nil || p.FanOut != "" || len(p.Targets) != 1 {
		t.Errorf("CREATE TEMPORARY TABLE orders: %+v %v", p, err)
	}
}

// Catalog statements are read as the logical view needs them.
func TestReadCatalog(t *testing.T) {
	r := ddlRouter(t)
	for _, tc := range []struct {
		sql  string
		kind catalogKind
		err  error
	}{
		{"SHOW TABLES", catalogShowTables, nil},
		{"SHOW FULL TABLES FROM shop LIKE 'o%'", catalogShowTables, nil},
		{"SHOW TABLES IN `shop` WHERE Tables_in_shop <> 'x'", catalogShowTables, nil},
		{"SHOW TABLE STATUS LIKE 'orders'", catalogTableStatus, nil},
		{"DESCRIBE orders", catalogDescribe, nil},
		{"DESC shop.orders 'order%'", catalogDescribe, nil},
		{"SHOW FULL COLUMNS FROM orders IN shop LIKE 'a%'", catalogDescribe, nil},
		{"SHOW INDEXES IN orders", catalogDescribe, nil},
		{"SHOW CREATE TABLE `orders`", catalogDescribe, nil},
		{"SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()", catalogSelect, nil},
		{"select count(*) from INFORMATION_SCHEMA.`columns` c join information_schema.statistics s using (table_name)", catalogSelect, nil},
		{"SELECT * FROM information_schema.TRIGGERS", 0, ErrCatalog},
		{"INSERT INTO t SELECT TABLE_NAME FROM information_schema.TABLES", 0, ErrCatalog},
		{"SELECT * FROM information_schema.SCHEMATA", 0, nil},
		{"EXPLAIN SELECT * FROM information_schema.TABLES", 0, nil},
		{"SELECT * FROM orders WHERE order_time > ? AND EXISTS (SELECT 1 FROM information_schema.TABLES)", 0, ErrCatalog},
		{"SELECT a.note, t.TABLE_ROWS FROM audit_log a, information_schema.TABLES t", 0, ErrCatalog},
		{"SHOW DATABASES", 0, nil},
		{"SHOW CREATE VIEW v", 0, nil},
	} {
		st := r.Analyze(tc.sql)
		kind := catalogKind(0)
		if st.catalog != nil {
			kind = st.catalog.kind
		}
		if kind != tc.kind || !errors.Is(st.catalogErr, tc.err) || (tc.err == nil) != (st.catalogErr == nil) {
			t.Errorf("%s: kind %d err %v, want %d %v", tc.sql, kind, st.catalogErr, tc.kind, tc.err)
		}
	}
	// Without a static route or a time-sharded table the tables are the default backend's.
	plain, err := New(Config{Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	if st := plain.Analyze("SHOW TABLES"); st.catalog != nil {
		t.Errorf("SHOW TABLES without a logical view is read as a catalog statement")
	}
}

// The view maps each backend's tables to the logical ones.
func TestCatalogView(t *testing.T) {
	r := ddlRouter(t)
	v, err := r.CatalogView()
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Sources(); !reflect.DeepEqual(got, []string{"hot", "cold"}) {
		t.Errorf("sources %v", got)
	}
	for _, tc := range []struct {
		backend, table, name string
		role                 TableRole
	}{
		{"hot", "items", "items", TablePlain},
		{"cold", "items", "", TableHidden},
		{"cold", "audit_log", "audit_log", TablePlain},
		{"hot", "audit_log", "", TableHidden},
		{"hot", "orders_202503", "orders", TableDefinition},
		{"hot", "orders_202502", "orders", TablePart},
		{"cold", "orders_202412", "orders", TablePart},
		{"hot", "orders_202412", "", TableHidden}, // a copy on another backend than the metadata's
		{"hot", "orders", "", TableHidden},
		{"hot", "orders_209901", "orders_209901", TablePlain}, // not in the metadata: a table of its own
	} {
		if name, role := v.Table(tc.backend, tc.table); name != tc.name || role != tc.role {
			t.Errorf("%s on %s: %q %d, want %q %d", tc.table, tc.backend, name, role, tc.name, tc.role)
		}
	}
}

// FuzzReadDDL: any text read as DDL names its tables where they are written.
func FuzzReadDDL(f *testing.F) {
	for _, s := range []string{"ALTER TABLE t ADD c INT", "CREATE OR REPLACE UNIQUE INDEX IF NOT EXISTS i USING BTREE ON db.t (a)",
		"DROP INDEX IF EXISTS i ON `t` WAIT 5", "RENAME TABLES IF EXISTS t WAIT 2 TO u, v NOWAIT TO w", "OPTIMIZE LOCAL TABLE t, db.u",
		"ALTER TABLE t RENAME TO u", "CREATE TABLE t (LIKE u)", "TRUNCATE t", "DROP TEMPORARY TABLE IF EXISTS t, u"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		toks, _ := lex(sql)
		d := readDDL(toks, 0)
		if d == nil {
			return
		}
		for _, r := range append(append([]ddlRef(nil), d.acts...), d.others...) {
			if r.from < 0 || r.to > len(sql) || r.from >= r.to {
				t.Fatalf("%q: table %s at %d..%d", sql, r.name, r.from, r.to)
			}
			if w := strings.ToLower(sql[r.from:r.to]); !strings.Contains(w, r.name) && !strings.Contains(w, "`") {
				t.Fatalf("%q: table %s written as %q", sql, r.name, w)
			}
		}
	})
}
