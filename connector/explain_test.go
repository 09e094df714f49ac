package connector_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/embedded"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// password is in every backend DSN of the explain fixture; no output may contain it.
const password = "Pw-9f3c1d7e-secret"

// explainFixture is four embedded backends (hot, cold, shadow_hot, shadow_cold) that accept only
// user app with password, and an obroute connector over them: orders sharded by month
// (2024-12 on cold, 2025-01..03 on hot, hot window = current month + 2, today 2025-03-15),
// audit_log on cold, hint-only shadow rule, enable_cached_server on.
type explainFixture struct {
	c       *connector.Connector
	db      *sql.DB
	addr    map[string]string
	servers map[string]*embedded.Server
	log     *bytes.Buffer
}

var fixtureNames = []string{"hot", "cold", "shadow_hot", "shadow_cold"}

func newExplainFixture(t *testing.T, opts ...connector.Option) *explainFixture {
	t.Helper()
	f := &explainFixture{addr: map[string]string{}, servers: map[string]*embedded.Server{}, log: &bytes.Buffer{}}
	cfg := &config.Config{
		Routes:             map[string]string{"audit_log": "cold"},
		EnableCachedServer: true,
		Shadow:             shadowByHint(),
		TimeTables:         []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	tables := ordersDecemberToMarch()
	for _, name := range fixtureNames {
		srv, err := embedded.Start(embedded.Options{Name: name, User: "app", Password: password})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		f.servers[name] = srv
		f.addr[name] = srv.Addr()
		role := name
		if strings.HasPrefix(name, "shadow") {
			role = "shadow"
		}
		cfg.Backends = append(cfg.Backends, config.Backend{Name: name, Role: role, DSN: srv.DSN("test")})
		admin, err := sql.Open("mysql", srv.DSN("test"))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		mustExec(t, admin, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
		mustExec(t, admin, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
		for i, tb := range tables {
			if (i == 0) == (role == "cold" || name == "shadow_cold") {
				mustExec(t, admin, "CREATE TABLE "+tb.Name+" (id INT PRIMARY KEY, user_id INT, amount INT, order_time DATETIME)")
				mustExec(t, admin, fmt.Sprintf("INSERT INTO %s VALUES (%d, 1, 10, '%s')", tb.Name, i+1, tb.Min.Add(48*time.Hour).Format(time.DateTime)))
			}
		}
	}
	if !strings.Contains(cfg.Backends[0].DSN, password) {
		t.Fatalf("fixture DSN has no password")
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	logger := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	all := append([]connector.Option{connector.WithLogger(logger), connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now })}, opts...)
	c, err := connector.New(cfg, all...)
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.db = sql.OpenDB(c)
	t.Cleanup(func() { f.db.Close() })
	return f
}

func mustExec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

type queryer interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// explainRows runs EXPLAIN ROUTE through database/sql and returns its rows.
func explainRows(t *testing.T, ctx context.Context, q queryer, query string, args ...any) []connector.ExplainLine {
	t.Helper()
	rows, err := q.QueryContext(ctx, "EXPLAIN ROUTE "+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN ROUTE %s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || strings.Join(cols, ",") != "section,step,detail" {
		t.Fatalf("columns %v (%v), want section,step,detail", cols, err)
	}
	var out []connector.ExplainLine
	for rows.Next() {
		var l connector.ExplainLine
		if err := rows.Scan(&l.Section, &l.Step, &l.Detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func step(lines []connector.ExplainLine, name string) string {
	for _, l := range lines {
		if l.Step == name {
			return l.Detail
		}
	}
	return ""
}

func TestExplainRouteThroughSQL(t *testing.T) {
	f := newExplainFixture(t)
	ctx := context.Background()
	conn, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hot, cold := f.addr["hot"], f.addr["cold"]
	// Statements run before each case, on the same client session.
	if _, err := conn.ExecContext(ctx, "INSERT INTO items VALUES (1, 'on hot')"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		ctx      context.Context
		sql      string
		args     []any
		info     string
		prompt   string // a prompt line's Step + " " + Detail prefix
		subQuery string // the first SUB_QUERY's prefix
	}{
		{name: "default backend", sql: "SELECT note FROM items WHERE id = ?", args: []any{1},
			info:     fmt.Sprintf(`{route_info_type:"USE_ROUTE_POLICY", class:"default", backend:"hot", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, hot),
			prompt:   "INFO Will route to the default backend hot",
			subQuery: fmt.Sprintf(`{index:1, backend:"hot", addr:%q, cold:false, sql:"SELECT note FROM items WHERE id = ?", args:[1]}`, hot)},
		{name: "static route", sql: "SELECT note FROM audit_log",
			info:   fmt.Sprintf(`{route_info_type:"USE_ROUTE_POLICY", class:"default", backend:"cold", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, cold),
			prompt: "INFO Will route to backend cold by the route of table audit_log"},
		{name: "backend hint from the context", ctx: hint.WithBackend(ctx, "cold"), sql: "SELECT 1",
			info:   fmt.Sprintf(`{route_info_type:"USE_COMMENT_TARGET_DB", class:"forced", backend:"cold", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, cold),
			prompt: "INFO Will route to backend cold named by the backend hint"},
		{name: "previous statement's session", sql: "SELECT ROW_COUNT()",
			info:   fmt.Sprintf(`{route_info_type:"USE_LAST_SESSION", class:"forced", backend:"hot", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, hot),
			prompt: "INFO Will route to last connected server since the statement reads the previous statement's session"},
		{name: "unparsable, cached server", sql: "FLOOB the items",
			info:   fmt.Sprintf(`{route_info_type:"USE_CACHED_SESSION", class:"cached", backend:"hot", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, hot),
			prompt: "INFO Will route to last connected server since the route cannot be computed"},
		{name: "session state", sql: "SET time_zone = '+08:00'",
			info: fmt.Sprintf(`{route_info_type:"USE_SESSION_STATE", class:"forced", backend:"hot", addr:%q, in_transaction:false, shadow:false, query_level:"none"}`, hot)},
		{name: "shadow", ctx: hint.WithShadow(ctx), sql: "INSERT INTO audit_log VALUES (5, 'x')",
			info:     fmt.Sprintf(`{route_info_type:"USE_ROUTE_POLICY", class:"shadow", backend:"shadow_cold", addr:%q, in_transaction:false, shadow:true, query_level:"none"}`, f.addr["shadow_cold"]),
			prompt:   "INFO Shadow traffic: ",
			subQuery: fmt.Sprintf(`{index:1, backend:"shadow_cold", addr:%q, cold:false, sql:"INSERT INTO audit_log VALUES (5, 'x')", args:[]}`, f.addr["shadow_cold"])},
		{name: "time-sharded split", sql: "SELECT user_id, SUM(amount) FROM orders WHERE order_time >= ? GROUP BY user_id", args: []any{"2024-12-01"},
			info:     `{route_info_type:"USE_PARTITION_LOCATION_LOOKUP", class:"split", backends:"cold,hot", in_transaction:false, shadow:false, query_level:"L2"}`,
			prompt:   "INFO range [2024-12-01 00:00:00, +inf) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into",
			subQuery: fmt.Sprintf(`{index:1, backend:"cold", addr:%q, cold:true, tables:"orders_202412", sql:"/* cold_query */ `, cold)},
		{name: "refused: L1 reaching cold data", ctx: hint.WithLevel(ctx, hint.L1), sql: "SELECT id FROM orders WHERE order_time >= '2024-12-01'",
			info:   `{refused:true, reason:"level_violation"}`,
			prompt: "ERROR Will not route: obroute: query level violated"},
		{name: "refused: function on the shard key", sql: "SELECT id FROM orders WHERE DATE(order_time) = '2025-03-01'",
			info: `{refused:true, reason:"shard_key_function"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cctx := c.ctx
			if cctx == nil {
				cctx = ctx
			}
			lines := explainRows(t, cctx, conn, c.sql, c.args...)
			if got := step(lines, "ROUTE_INFO"); got != c.info {
				t.Errorf("ROUTE_INFO\n got %s\nwant %s", got, c.info)
			}
			if c.prompt != "" {
				found := false
				for _, l := range lines {
					found = found || (l.Section == routing.SectionPrompts && strings.HasPrefix(l.Step+" "+l.Detail, c.prompt))
				}
				if !found {
					t.Errorf("prompts %v, want one starting %q", lines, c.prompt)
				}
			}
			if c.subQuery != "" && !strings.HasPrefix(step(lines, "SUB_QUERY"), c.subQuery) {
				t.Errorf("SUB_QUERY\n got %s\nwant prefix %s", step(lines, "SUB_QUERY"), c.subQuery)
			}
		})
	}
	// EXPLAIN ROUTE ran nothing: the shadow INSERT did not happen.
	var n int
	admin, _ := sql.Open("mysql", f.servers["shadow_cold"].DSN("test"))
	defer admin.Close()
	if err := admin.QueryRow("SELECT COUNT(*) FROM audit_log").Scan(&n); err != nil || n != 0 {
		t.Errorf("shadow_cold audit_log has %d rows (%v), want 0: EXPLAIN ROUTE must not run the statement", n, err)
	}
}

// TestExplainRouteInTransaction: inside a transaction EXPLAIN ROUTE shows the pinned backend and
// runs nothing.
func TestExplainRouteInTransaction(t *testing.T) {
	f := newExplainFixture(t)
	ctx := context.Background()
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// Before the first statement the transaction is not bound yet: normal route, in_transaction.
	lines := explainRows(t, ctx, tx, "SELECT note FROM items")
	want := fmt.Sprintf(`{route_info_type:"USE_ROUTE_POLICY", class:"default", backend:"hot", addr:%q, in_transaction:true, shadow:false, query_level:"none"}`, f.addr["hot"])
	if got := step(lines, "ROUTE_INFO"); got != want {
		t.Errorf("before the first statement\n got %s\nwant %s", got, want)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO audit_log VALUES (1, 'binds the transaction to cold')"); err != nil {
		t.Fatal(err)
	}
	lines = explainRows(t, ctx, tx, "SELECT ? + 1", 2) // names no table: it follows the transaction
	want = fmt.Sprintf(`{route_info_type:"USE_LAST_SESSION", class:"forced", backend:"cold", addr:%q, in_transaction:true, shadow:false, query_level:"none"}`, f.addr["cold"])
	if got := step(lines, "ROUTE_INFO"); got != want {
		t.Errorf("in the transaction\n got %s\nwant %s", got, want)
	}
	wantPrompt := connector.ExplainLine{Section: "Route Prompts", Step: "INFO", Detail: "Will route to last connected server since current query in transaction"}
	if !slices.Contains(lines, wantPrompt) {
		t.Errorf("lines %q, want the prompt %q", lines, wantPrompt.Detail)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	admin, _ := sql.Open("mysql", f.servers["cold"].DSN("test"))
	defer admin.Close()
	if err := admin.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 0 {
		t.Errorf("cold items has %d rows (%v), want 0: EXPLAIN ROUTE must not run the statement", n, err)
	}
}

func TestConnectorExplain(t *testing.T) {
	f := newExplainFixture(t)
	plan, err := f.c.Explain(hint.WithLevel(context.Background(), hint.L1), "EXPLAIN ROUTE SELECT id FROM orders WHERE order_time >= ?", time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Rule != "USE_PARTITION_LOCATION_LOOKUP" || plan.Class != "hot_only" || plan.Level != hint.L1 || len(plan.Targets) != 1 || plan.Targets[0].Backend != "hot" ||
		len(plan.Backends) != 1 || plan.Backends[0] != "hot" {
		t.Errorf("plan %s %s %s %v, want USE_PARTITION_LOCATION_LOOKUP hot_only L1 on hot", plan.Rule, plan.Class, plan.Level, plan.Backends)
	}
	// The hot target reads two tables (a UNION ALL of both): each leg takes the argument.
	tg := plan.Targets[0]
	if len(tg.Args) != 2 || strings.Count(tg.SQL, "?") != 2 || tg.Args[0] != any(time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)) || tg.Args[1] != tg.Args[0] {
		t.Errorf("target %q with %v, want an argument per placeholder, as database/sql takes them", tg.SQL, tg.Args)
	}
	_, err = f.c.Explain(context.Background(), "SELECT id FROM orders")
	if !errors.Is(err, routing.ErrNoTimeRange) {
		t.Errorf("got %v, want ErrNoTimeRange", err)
	}
	if _, err := f.c.Explain(context.Background(), "SELECT ?", struct{}{}); err == nil || !strings.Contains(err.Error(), "argument 1") {
		t.Errorf("got %v, want an error naming argument 1", err)
	}
}

// TestExplainNeverShowsPasswords sends every kind of statement through EXPLAIN ROUTE, the Go
// API and the debug log, with a password in every backend DSN.
func TestExplainNeverShowsPasswords(t *testing.T) {
	f := newExplainFixture(t)
	ctx := context.Background()
	var all strings.Builder
	statements := []struct {
		ctx context.Context
		sql string
	}{
		{ctx, "SELECT note FROM items"},
		{ctx, "SELECT note FROM audit_log"},
		{hint.WithShadow(ctx), "SELECT note FROM audit_log"},
		{ctx, "SELECT user_id, COUNT(*) FROM orders WHERE order_time >= '2024-12-01' GROUP BY user_id ORDER BY 2 DESC LIMIT 3"},
		{hint.WithLevel(ctx, hint.L1), "SELECT id FROM orders WHERE order_time >= '2024-12-01'"},
		{ctx, "/*+ OBROUTE(backend=nowhere) */ SELECT 1"},
		{ctx, "/*+ OBROUTE(shadow=maybe) */ SELECT 1"},
		{ctx, "GARBLE nonsense"}, // one word after EXPLAIN ROUTE would be MySQL's DESCRIBE route <column>
		{ctx, "SET time_zone = '+00:00'"},
	}
	for _, s := range statements {
		for _, l := range explainRows(t, s.ctx, f.db, s.sql) {
			fmt.Fprintln(&all, l.Section, l.Step, l.Detail)
		}
		lines, err := f.c.ExplainLines(s.ctx, s.sql)
		if err != nil {
			fmt.Fprintln(&all, err)
		}
		for _, l := range lines {
			fmt.Fprintln(&all, l.Section, l.Step, l.Detail)
		}
		// Run it too, for the debug log and the errors.
		if rows, err := f.db.QueryContext(s.ctx, s.sql); err != nil {
			fmt.Fprintln(&all, err)
		} else {
			rows.Close()
		}
	}
	fmt.Fprintf(&all, "%+v\n", f.c.Stats())
	all.WriteString(f.log.String())
	out := all.String()
	if !strings.Contains(out, f.addr["shadow_cold"]) || !strings.Contains(out, "level_violation") {
		t.Fatalf("the output does not cover the plans:\n%s", out)
	}
	if strings.Contains(out, password) {
		t.Errorf("the password appears in the output:\n%s", out)
	}
}

// shadowByHint is a shadow rule of the hint alone, hot and cold each with its shadow backend.
func shadowByHint() *config.Shadow {
	return &config.Shadow{
		Mappings:         []config.ShadowMapping{{Production: "hot", Shadow: "shadow_hot"}, {Production: "cold", Shadow: "shadow_cold"}},
		Algorithms:       []config.ShadowAlgorithm{{Name: "by-hint", Kind: "hint"}},
		DefaultAlgorithm: "by-hint",
	}
}

// ordersDecemberToMarch is the shard metadata of orders from December 2024 to March 2025, one
// table a month, December cold.
func ordersDecemberToMarch() metadata.StaticSource {
	var tables metadata.StaticSource
	for i, m := range []string{"202412", "202501", "202502", "202503"} {
		from := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0)
		tables = append(tables, metadata.Table{Name: "orders_" + m, Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: i > 0})
	}
	return tables
}
