package routing

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/metadata"
)

// ruledFixture is a router with a rule of every kind: audit_log statically routed to cold,
// orders time-sharded (July 2024 .. March 2025, hot from January, today 2025-03-15), and
// orders_log a shadow table whose algorithm reads user_id.
func ruledFixture(t *testing.T) *fixture {
	t.Helper()
	return ruledFixtureWith(t, shadow.Algorithm{Name: "test-user", Kind: shadow.KindValueMatch, Column: "user_id", Operation: shadow.OpInsert, Values: []string{"0"}})
}

// ruledFixtureWith is ruledFixture with algs as the algorithms of orders_log, besides by-hint.
func ruledFixtureWith(t testing.TB, algs ...shadow.Algorithm) *fixture {
	t.Helper()
	names := []string{"by-hint"}
	for _, a := range algs {
		names = append(names, a.Name)
	}
	f := &fixture{now: day("2025-03-15 12:00:00")}
	snap, err := metadata.NewSnapshot(monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.snap = snap
	f.r, err = New(Config{
		Settings: &config.Config{
			Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold},
				{Name: "shadow_hot", Role: config.RoleShadow}, {Name: "shadow_cold", Role: config.RoleShadow}},
			Default: "hot",
			Routes:  map[string]string{"audit_log": "cold"},
		},
		Shadow: &shadow.Rule{Shadow: config.Shadow{
			Mappings:         []shadow.Mapping{{Production: "hot", Shadow: "shadow_hot"}, {Production: "cold", Shadow: "shadow_cold"}},
			Algorithms:       append([]shadow.Algorithm{{Name: "by-hint", Kind: shadow.KindHint}}, algs...),
			DefaultAlgorithm: "by-hint",
			Tables:           []shadow.Table{{Name: "orders_log", Algorithms: names}},
		}},
		Time: &TimeConfig{
			Tables:   []config.TimeTable{ordersTable()},
			Snapshot: func() *metadata.Snapshot { return f.snap },
			Clock:    func() time.Time { return f.now },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	declareDatetime(f.r, "orders_202407")
	defineShadowTables(t, f.r)
	return f
}

// MariaDB clauses the parser does not know are set aside: the statement is routed by the tables
// the rest names, and sent as written.
func TestMariaDBClausesFollowTheRoute(t *testing.T) {
	cases := []struct {
		sql     string
		kind    Kind
		params  int
		backend string
	}{
		{"INSERT INTO audit_log (id, note) VALUES (1, 'x') RETURNING id, note", KindInsert, 0, "cold"},
		{"insert into audit_log (id) values (?) returning *", KindInsert, 1, "cold"},
		{"DELETE FROM audit_log WHERE id = ? RETURNING id", KindDelete, 1, "cold"},
		{"REPLACE INTO audit_log (id) VALUES (?) RETURNING id, ? AS tag", KindInsert, 2, "cold"},
		{"SELECT * FROM audit_log LIMIT ROWS EXAMINED 10", KindSelect, 0, "cold"},
		{"SELECT * FROM audit_log WHERE id > ? LIMIT 5 ROWS EXAMINED 100", KindSelect, 1, "cold"},
		{"SELECT * FROM audit_log LIMIT 2 OFFSET 1 ROWS EXAMINED 100 FOR UPDATE", KindSelect, 0, "cold"},
		{"SELECT note, COUNT(*) FROM audit_log GROUP BY note WITH ROLLUP", KindSelect, 0, "cold"},
		{"INSERT INTO items (id) VALUES (1) RETURNING id", KindInsert, 0, "hot"},
	}
	f := ruledFixture(t)
	for _, c := range cases {
		st := f.r.Analyze(c.sql)
		if st.ParseErr != nil || st.Kind != c.kind || st.Params != c.params {
			t.Errorf("%s: kind %s params %d parse error %v, want %s %d none", c.sql, st.Kind, st.Params, st.ParseErr, c.kind, c.params)
		}
		p, err := f.r.Route(Input{Statement: st})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if len(p.Targets) != 1 || p.Targets[0].Backend != c.backend || p.Targets[0].SQL != c.sql {
			t.Errorf("%s: targets %+v, want the statement as written on %s", c.sql, p.Targets, c.backend)
		}
	}
}

// On a time-sharded table a RETURNING clause goes with the rewritten statement when it reaches
// one table; ROWS EXAMINED, which counts per statement, is refused; WITH ROLLUP across tables
// is merged, its legs grouping without it.
func TestMariaDBClausesOnTimeShardedTables(t *testing.T) {
	f := ruledFixture(t)
	p, err := f.route("INSERT INTO orders (id, order_time, amount) VALUES (1, ?, 2) RETURNING id, ? AS tag", args("2025-03-05", "t"), Input{})
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "insert into orders_202503(id, order_time, amount) values (1, ?, 2) RETURNING id, ? AS tag", []any{"2025-03-05", "t"}}})
	p, err = f.route("DELETE FROM orders WHERE order_time >= '2025-03-02' RETURNING id", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "delete from orders_202503 where order_time >= '2025-03-02' and orders_202503.order_time >= '2025-03-01 00:00:00' RETURNING id", nil}})
	p, err = f.route("select user_id, count(*) from orders where order_time >= '2025-03-02' group by user_id with rollup", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Targets[0].SQL; !strings.Contains(got, "group by user_id with rollup and") && !strings.HasSuffix(got, "group by user_id with rollup") {
		t.Errorf("the one table's statement lost WITH ROLLUP: %s", got)
	}
	p, err = f.route("select user_id, count(*) from orders where order_time >= '2025-01-02' group by user_id with rollup", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Targets[0].SQL; strings.Contains(got, "rollup") || p.Merge == nil || !p.Merge.Rollup {
		t.Errorf("split WITH ROLLUP: %s, merge %+v", got, p.Merge)
	}
	refusals := []struct{ sql, says string }{
		{"INSERT INTO orders (id, order_time) VALUES (1, '2025-02-05'), (2, '2025-03-05') RETURNING id", "RETURNING"},
		{"DELETE FROM orders WHERE order_time >= '2025-02-20' RETURNING id", "RETURNING"},
		{"INSERT INTO orders (id, order_time) VALUES (1, '2025-03-05') RETURNING orders.id", "RETURNING names the time-sharded table"},
		{"SELECT id FROM orders WHERE order_time >= '2025-03-02' LIMIT ROWS EXAMINED 10", "ROWS EXAMINED"},
		{"select user_id, count(*) from orders where order_time >= '2025-01-02' group by user_id with rollup having count(*) > 1", "WITH ROLLUP with HAVING"},
	}
	for _, r := range refusals {
		if _, err := f.route(r.sql, nil, Input{}); !errors.Is(err, ErrNotMergeable) || !strings.Contains(err.Error(), r.says) {
			t.Errorf("%s: %v, want ErrNotMergeable saying %q", r.sql, err, r.says)
		}
	}
}

// A statement the parser cannot read is routed by the static routes of the tables it names, and
// refused when it names a table it cannot be routed by; one that names no routed table still
// runs on the default backend.
func TestUnreadableStatementsFollowTheRule(t *testing.T) {
	f := ruledFixture(t)
	routed := []struct{ sql, backend string }{
		{"SELECT DISTINCTROW * FROM audit_log WHERE id = 1", "cold"},
		{"SET STATEMENT max_statement_time = 1 FOR SELECT * FROM `audit_log`", "cold"},
		{"SELECT a.id FROM shop.audit_log AS a FOR SHARE", "cold"},
		{"INSERT LOW_PRIORITY INTO audit_log VALUES (1)", "cold"},
		{"SELECT DISTINCTROW * FROM items", "hot"},
		{"SELECT EXTRACT(YEAR FROM audit_log_day) FROM items FOR SHARE", "hot"},
		{"FROB nonsense", "hot"},
	}
	for _, c := range routed {
		st := f.r.Analyze(c.sql)
		if st.ParseErr == nil {
			t.Fatalf("%s: the parser read it; pick a statement it cannot read", c.sql)
		}
		p, err := f.r.Route(Input{Statement: st})
		if err != nil || p.Targets[0].Backend != c.backend || p.Targets[0].SQL != c.sql {
			t.Errorf("%s: %v %+v, want it as written on %s", c.sql, err, p, c.backend)
		}
	}
	refused := []struct {
		sql   string
		hints hint.Set
		says  string
	}{
		{sql: "SELECT DISTINCTROW id FROM orders WHERE order_time >= '2025-03-02'", says: "time-sharded table orders"},
		{sql: "SELECT DISTINCTROW audit_log FROM items", says: "names audit_log"},
		{sql: "INSERT LOW_PRIORITY INTO orders_log (id, user_id) VALUES (1, 0)", says: "shadow table orders_log"},
	}
	for _, c := range refused {
		_, err := f.r.Route(Input{Statement: f.r.Analyze(c.sql), Hints: c.hints})
		if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrUnreadable saying %q", c.sql, err, c.says)
		}
	}
	// The shadow hint decides without the column values.
	p, err := f.r.Route(Input{Statement: f.r.Analyze("INSERT LOW_PRIORITY INTO orders_log (id, user_id) VALUES (1, 0)"), Hints: hint.Set{Shadow: hint.ShadowOn}})
	if err != nil || p.Targets[0].Backend != "shadow_hot" {
		t.Errorf("shadow-hinted unreadable insert: %v %+v, want shadow_hot", err, p)
	}
}

// A shadow-hinted INSERT … RETURNING, and one whose values match the shadow rule, reach the
// shadow backend only.
func TestReturningFollowsShadowRule(t *testing.T) {
	f := ruledFixture(t)
	for _, c := range []struct {
		sql   string
		hints hint.Set
		want  string
	}{
		{"INSERT INTO orders_log (id, user_id) VALUES (1, 0) RETURNING id", hint.Set{}, "shadow_hot"},
		{"INSERT INTO orders_log (id, user_id) VALUES (1, 7) RETURNING id", hint.Set{}, "hot"},
		{"INSERT INTO orders_log (id, user_id) VALUES (1, 7) RETURNING id", hint.Set{Shadow: hint.ShadowOn}, "shadow_hot"},
		{"INSERT INTO audit_log (id) VALUES (1) RETURNING id", hint.Set{Shadow: hint.ShadowOn}, "shadow_cold"},
	} {
		p, err := f.r.Route(Input{Statement: f.r.Analyze(c.sql), Hints: c.hints})
		if err != nil || len(p.Targets) != 1 || p.Targets[0].Backend != c.want {
			t.Errorf("%s %v: %v %+v, want %s", c.sql, c.hints, err, p, c.want)
		}
	}
}

// A statement naming a statically routed table follows its route, also inside a transaction:
// there, another backend is refused, never the transaction's backend taken silently.
func TestStaticRouteInTransaction(t *testing.T) {
	f := ruledFixture(t)
	hotTx := &SessionState{InTransaction: true, TxBackend: "hot", LastBackend: "hot"}
	for _, sql := range []string{
		"INSERT INTO audit_log (id) VALUES (1)",
		"INSERT INTO audit_log (id) VALUES (1) RETURNING id",
		"SELECT DISTINCTROW * FROM audit_log",
	} {
		_, err := f.r.Route(Input{Statement: f.r.Analyze(sql), Session: hotTx})
		if !errors.Is(err, ErrCrossBackendTx) || !strings.Contains(err.Error(), "bound to backend hot") {
			t.Errorf("%s in a hot transaction: %v, want ErrCrossBackendTx", sql, err)
		}
	}
	coldTx := &SessionState{InTransaction: true, TxBackend: "cold", LastBackend: "cold"}
	p, err := f.r.Route(Input{Statement: f.r.Analyze("INSERT INTO audit_log (id) VALUES (1)"), Session: coldTx})
	if err != nil || p.Targets[0].Backend != "cold" {
		t.Errorf("in a cold transaction: %v %+v", err, p)
	}
}

// EXPLAIN ROUTE must be followed by a statement: "EXPLAIN route id" is MySQL's DESCRIBE of
// column id of a table named route.
func TestExplainRouteIsExact(t *testing.T) {
	f := ruledFixture(t)
	for _, sql := range []string{"EXPLAIN route id", "explain ROUTE `id`;", "EXPLAIN route 'i%'", "DESCRIBE route", "EXPLAIN route", "DESC route id"} {
		if st := f.r.Analyze(sql); st.Kind == KindExplainRoute {
			t.Errorf("%s: taken for EXPLAIN ROUTE", sql)
		}
	}
	for sql, inner := range map[string]string{
		"EXPLAIN ROUTE SELECT 1":                                           "SELECT 1",
		"explain route\n  select * from audit_log":                         "select * from audit_log",
		"EXPLAIN ROUTE /*+ OBROUTE(backend=cold) */ SELECT 1":              "/*+ OBROUTE(backend=cold) */ SELECT 1",
		"EXPLAIN ROUTE INSERT INTO audit_log (id) VALUES (1) RETURNING id": "INSERT INTO audit_log (id) VALUES (1) RETURNING id",
		"EXPLAIN ROUTE GARBLE nonsense":                                    "GARBLE nonsense",
	} {
		st := f.r.Analyze(sql)
		if st.Kind != KindExplainRoute || st.Explained == nil || st.Explained.SQL != inner {
			t.Errorf("%s: kind %s explained %+v, want EXPLAIN ROUTE of %q", sql, st.Kind, st.Explained, inner)
		}
	}
	if st := f.r.Analyze("EXPLAIN ROUTE /*+ OBROUTE(backend=cold) */ SELECT 1"); st.Explained.Hints.Backend != "cold" {
		t.Errorf("the explained statement lost its hint: %+v", st.Explained.Hints)
	}
}

// A declared level is checked against the range, not against the tables that exist: L1 over a
// range before the hot window is refused whether or not a table holds it.
func TestLevelDecidedByRange(t *testing.T) {
	f := standard(t) // tables from July 2024
	for _, sql := range []string{
		"select id from orders where order_time >= '2024-08-01' and order_time < '2024-08-02'", // a table holds it
		"select id from orders where order_time >= '2023-08-01' and order_time < '2023-08-02'", // no table does
	} {
		if _, err := f.route(sql, nil, Input{Hints: hint.Set{Level: hint.L1}}); !errors.Is(err, ErrLevelViolation) {
			t.Errorf("L1 %s: %v, want ErrLevelViolation", sql, err)
		}
	}
	// L3 reaching the hot window is refused though no table holds that range yet.
	if _, err := f.route("select id from orders where order_time >= '2026-01-01'", nil, Input{Hints: hint.Set{Level: hint.L3}}); !errors.Is(err, ErrLevelViolation) {
		t.Errorf("L3 after every table: %v, want ErrLevelViolation", err)
	}
	// A range with no values reaches nothing: L1 holds, and no row is read.
	p, err := f.route("select id from orders where order_time > '2025-03-02' and order_time < '2025-03-01'", nil, Input{Hints: hint.Set{Level: hint.L1}})
	if err != nil || !strings.HasSuffix(p.Targets[0].SQL, "and orders_202503.order_time >= '2025-03-01 00:00:00'") {
		t.Errorf("empty range at L1: %v %+v", err, p)
	}
	// Undeclared, a range before every table is history: L3.
	p, err = f.route("select id from orders where order_time < '2020-01-01'", nil, Input{})
	if err != nil || p.Level != hint.L3 {
		t.Errorf("range before every table: %v %+v, want level L3", err, p)
	}
}
