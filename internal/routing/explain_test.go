package routing_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/merge"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/metadata"
)

// explainRouter routes over hot, cold, shadow_hot and shadow_cold with orders sharded by
// month (July 2024 … March 2025, hot from January 2025, today 2025-03-15), audit_log on cold,
// a hint-only shadow rule and enable_cached_server on.
func explainRouter(t testing.TB) *routing.Router {
	t.Helper()
	var tables []metadata.Table
	for m := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC); !m.After(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)); m = m.AddDate(0, 1, 0) {
		tables = append(tables, metadata.Table{Name: "orders_" + m.Format("200601"), Min: m, Max: m.AddDate(0, 1, 0).Add(-time.Second),
			Hot: !m.Before(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))})
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	snap, err := metadata.NewSnapshot(tables, now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Settings: &config.Config{
			Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold},
				{Name: "shadow_hot", Role: config.RoleShadow}, {Name: "shadow_cold", Role: config.RoleShadow}},
			Default:            "hot",
			Routes:             map[string]string{"audit_log": "cold"},
			EnableCachedServer: true,
		},
		Shadow: shadowRule(),
		Time: &routing.TimeConfig{
			Tables:   []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
			Snapshot: func() *metadata.Snapshot { return snap },
			Clock:    func() time.Time { return now },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.SetShardKeyColumns(map[string]routing.ShardKeyColumn{tables[0].Name: {Type: routing.ShardKeyDatetime}})
	return r
}

func shadowRule() *shadow.Rule {
	return &shadow.Rule{Shadow: config.Shadow{
		Mappings:         []shadow.Mapping{{Production: "hot", Shadow: "shadow_hot"}, {Production: "cold", Shadow: "shadow_cold"}},
		Algorithms:       []shadow.Algorithm{{Name: "by-hint", Kind: shadow.KindHint}},
		DefaultAlgorithm: "by-hint",
	}}
}

var addrs = map[string]string{"hot": "10.0.0.1:3306", "cold": "10.0.0.2:3306", "shadow_hot": "10.0.0.3:3306", "shadow_cold": "10.0.0.4:3306"}

func explainOptions() routing.ExplainOptions {
	return routing.ExplainOptions{Address: func(b string) string { return addrs[b] }}
}

func namedArgs(vs ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vs))
	for i, v := range vs {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func TestPlanExplain(t *testing.T) {
	p := &routing.Plan{
		Statement: &routing.Statement{SQL: "SELECT user_id, SUM(amount) FROM orders WHERE order_time >= ? GROUP BY user_id", Kind: routing.KindSelect, Tables: []string{"orders"}, Params: 1},
		Type:      routing.UsePartitionLocationLookup,
		Class:     routing.ClassSplit,
		Hints:     hint.Set{Level: hint.L2, ColdQuery: true},
		Level:     hint.L2,
		Budget:    2 * time.Second,
		Targets: []routing.Target{
			{Backend: "cold", SQL: "/* cold_query */ SELECT user_id, SUM(amount) FROM orders_202412 WHERE order_time >= ? GROUP BY user_id", Args: namedArgs(time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)), Cold: true, Tables: []string{"orders_202412"}},
			{Backend: "hot", SQL: "SELECT user_id, SUM(amount) FROM orders_202501 WHERE order_time >= ? GROUP BY user_id", Args: namedArgs("2024-12-01", nil, []byte("x"), true, 1.5), Tables: []string{"orders_202501"}},
		},
		Merge:   &merge.Spec{OrderBy: []merge.OrderKey{{Column: 1, Desc: true}, {Column: 0}}, GroupBy: []int{0}, Aggregates: []merge.Aggregate{{Func: merge.AggSum, Column: 1}, {Func: merge.AggAvg, Column: 2, Sum: 3, Count: 4, Increment: 5, Exact: 6}}, Weights: []int{7}, Offset: 5, Limit: 10, Visible: 3, Distinct: true},
		Prompts: []string{"range [2024-12-01 00:00:00, +inf) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into 1 hot and 1 cold sub-queries"},
	}
	want := []routing.ExplainLine{
		{"Route Prompts", "INFO", "range [2024-12-01 00:00:00, +inf) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into 1 hot and 1 cold sub-queries"},
		{"Route Plan", "SQL_PARSE", `{cmd:"COM_QUERY", kind:"SELECT", tables:"orders", params:1}`},
		{"Route Plan", "HINTS", `{hints:"cold_query=true, query_level=L2"}`},
		{"Route Plan", "ROUTE_INFO", `{route_info_type:"USE_PARTITION_LOCATION_LOOKUP", class:"split", backends:"cold,hot", in_transaction:false, shadow:false, query_level:"L2", budget:"2s"}`},
		{"Route Plan", "SUB_QUERY", `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:true, tables:"orders_202412", sql:"/* cold_query */ SELECT user_id, SUM(amount) FROM orders_202412 WHERE order_time >= ? GROUP BY user_id", args:["2024-12-01 00:00:00"]}`},
		{"Route Plan", "SUB_QUERY", `{index:2, backend:"hot", addr:"10.0.0.1:3306", cold:false, tables:"orders_202501", sql:"SELECT user_id, SUM(amount) FROM orders_202501 WHERE order_time >= ? GROUP BY user_id", args:["2024-12-01", NULL, "x", true, 1.5]}`},
		{"Route Plan", "MERGE", `{order_by:"col2 DESC,col1", group_by:"col1", aggregates:"SUM(col2),AVG(col3, sum col4, count col5, exact col7)", weighed_columns:1, distinct:true, offset:5, limit:10, visible_columns:3}`},
	}
	checkLines(t, p.Explain(explainOptions()), want)

	// Expressions over aggregates, a DISTINCT aggregate, ROLLUP; hidden columns before a *.
	p.Merge = &merge.Spec{GroupBy: []int{0}, OrderBy: []merge.OrderKey{{Column: 0}}, Rollup: true, Limit: merge.NoLimit, Visible: 3,
		Aggregates: []merge.Aggregate{{Func: merge.AggCount, Column: 1, Distinct: []int{4}}, {Func: merge.AggSum, Column: 3}},
		Computed:   []merge.Computed{{Column: 2, Expr: merge.Round(merge.Arith('/', merge.Agg(3), merge.Agg(1)), 2), Increment: 5}}}
	checkLines(t, p.Explain(explainOptions())[6:], []routing.ExplainLine{{"Route Plan", "MERGE",
		`{order_by:"col1", group_by:"col1", aggregates:"COUNT(col2, distinct values of col5),SUM(col4)", computed:"col3 = ROUND((col4 / col2), 2)", rollup:true, visible_columns:3}`}})
	p.Merge = &merge.Spec{Leading: 2, OrderBy: []merge.OrderKey{{Column: 0}}, Limit: merge.NoLimit}
	checkLines(t, p.Explain(explainOptions())[6:], []routing.ExplainLine{{"Route Plan", "MERGE", `{order_by:"col1", leading_hidden_columns:2}`}})

	// Without addresses, and with a parse error and a plain concatenation.
	p = &routing.Plan{
		Statement: &routing.Statement{SQL: "FROB x", Kind: routing.KindOther, ParseErr: errors.New("syntax error at position 5")},
		Type:      routing.UseRoutePolicy, Class: routing.ClassCached,
		Targets: []routing.Target{{Backend: "hot", SQL: "FROB x"}, {Backend: "hot", SQL: "FROB y"}},
		Merge:   &merge.Spec{Limit: merge.NoLimit},
	}
	want = []routing.ExplainLine{
		{"Route Plan", "SQL_PARSE", `{cmd:"COM_STMT_EXECUTE", kind:"OTHER", tables:"", parse_error:"syntax error at position 5"}`},
		{"Route Plan", "HINTS", `{hints:"none"}`},
		{"Route Plan", "ROUTE_INFO", `{route_info_type:"USE_ROUTE_POLICY", class:"cached", backend:"hot", in_transaction:false, shadow:false, query_level:"none"}`},
		{"Route Plan", "SUB_QUERY", `{index:1, backend:"hot", cold:false, sql:"FROB x", args:[]}`},
		{"Route Plan", "SUB_QUERY", `{index:2, backend:"hot", cold:false, sql:"FROB y", args:[]}`},
		{"Route Plan", "MERGE", `{rows:"concatenated"}`},
	}
	checkLines(t, p.Explain(routing.ExplainOptions{Command: "COM_STMT_EXECUTE"}), want)
}

func checkLines(t *testing.T, got, want []routing.ExplainLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d lines, want %d:\n%s", len(got), len(want), text(got))
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

func text(lines []routing.ExplainLine) string {
	var b strings.Builder
	_ = routing.WriteExplain(&b, lines)
	return b.String()
}

// TestExplainRouteInfoTypes covers every route_info_type the router emits.
func TestExplainRouteInfoTypes(t *testing.T) {
	r := explainRouter(t)
	cases := []struct {
		name   string
		sql    string
		in     routing.Input
		prompt string // one of the prompts
		info   string // the ROUTE_INFO detail
		sub    string // the first SUB_QUERY detail's prefix
	}{
		{
			name:   "in transaction",
			sql:    "SELECT * FROM information_schema.INNODB_TRX WHERE trx_id = ?",
			in:     routing.Input{Args: namedArgs(7), Session: &routing.SessionState{InTransaction: true, TxBackend: "cold", LastBackend: "cold"}},
			prompt: "Will route to last connected server since current query in transaction",
			info:   `{route_info_type:"USE_LAST_SESSION", class:"forced", backend:"cold", addr:"10.0.0.2:3306", in_transaction:true, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SELECT * FROM information_schema.INNODB_TRX WHERE trx_id = ?", args:[7]}`,
		},
		{
			name:   "reads the previous statement's session",
			sql:    "SELECT FOUND_ROWS()",
			in:     routing.Input{Session: &routing.SessionState{LastBackend: "cold"}},
			prompt: "Will route to last connected server since the statement reads the previous statement's session",
			info:   `{route_info_type:"USE_LAST_SESSION", class:"forced", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SELECT FOUND_ROWS()", args:[]}`,
		},
		{
			name:   "temporary table",
			sql:    "SELECT * FROM tmp_report",
			in:     routing.Input{Session: &routing.SessionState{LastBackend: "hot", TempTables: map[string]string{"tmp_report": "cold"}}},
			prompt: "Will route to the server session of temporary table tmp_report",
			info:   `{route_info_type:"USE_TEMP_TABLE_SESSION", class:"forced", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SELECT * FROM tmp_report", args:[]}`,
		},
		{
			name:   "unparsable, cached server",
			sql:    "SELEKT 1",
			in:     routing.Input{Session: &routing.SessionState{LastBackend: "cold"}},
			prompt: "Will route to last connected server since the route cannot be computed: ",
			info:   `{route_info_type:"USE_CACHED_SESSION", class:"cached", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SELEKT 1", args:[]}`,
		},
		{
			name:   "backend hint",
			sql:    "/*+ OBROUTE(backend=cold) */ SELECT 1",
			prompt: "Will route to backend cold named by the backend hint",
			info:   `{route_info_type:"USE_COMMENT_TARGET_DB", class:"forced", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"/*+ OBROUTE(backend=cold) */ SELECT 1", args:[]}`,
		},
		{
			name:   "static table route",
			sql:    "SELECT note FROM audit_log WHERE id = 1",
			prompt: "Will route to backend cold by the route of table audit_log",
			info:   `{route_info_type:"USE_ROUTE_POLICY", class:"default", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SELECT note FROM audit_log WHERE id = 1", args:[]}`,
		},
		{
			name:   "default backend, shadow traffic",
			sql:    "INSERT INTO items VALUES (1)",
			in:     routing.Input{Hints: hint.Set{Shadow: hint.ShadowOn}},
			prompt: "Will route to the default backend hot",
			info:   `{route_info_type:"USE_ROUTE_POLICY", class:"shadow", backend:"shadow_hot", addr:"10.0.0.3:3306", in_transaction:false, shadow:true, query_level:"none"}`,
			sub:    `{index:1, backend:"shadow_hot", addr:"10.0.0.3:3306", cold:false, sql:"INSERT INTO items VALUES (1)", args:[]}`,
		},
		{
			name:   "time-sharded, hot only",
			sql:    "SELECT id FROM orders WHERE order_time >= '2025-02-01'",
			in:     routing.Input{Hints: hint.Set{Level: hint.L1}},
			prompt: "did not touch the history store",
			info:   `{route_info_type:"USE_PARTITION_LOCATION_LOOKUP", class:"hot_only", backend:"hot", addr:"10.0.0.1:3306", in_transaction:false, shadow:false, query_level:"L1"}`,
			sub:    `{index:1, backend:"hot", addr:"10.0.0.1:3306", cold:false, tables:"orders_202502,orders_202503", sql:"`,
		},
		{
			name:   "time-sharded, split",
			sql:    "SELECT id FROM orders WHERE order_time >= ?",
			in:     routing.Input{Args: namedArgs("2024-12-01")},
			prompt: "range [2024-12-01 00:00:00, +inf) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into ",
			info:   `{route_info_type:"USE_PARTITION_LOCATION_LOOKUP", class:"split", backends:"cold,hot", in_transaction:false, shadow:false, query_level:"L2"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:true, tables:"orders_202412", sql:"/* cold_query */ `,
		},
		{
			name:   "session state",
			sql:    "SET time_zone = '+08:00'",
			in:     routing.Input{Session: &routing.SessionState{LastBackend: "cold"}},
			prompt: "Session state: applied here and replayed to the other server sessions before their next use",
			info:   `{route_info_type:"USE_SESSION_STATE", class:"forced", backend:"cold", addr:"10.0.0.2:3306", in_transaction:false, shadow:false, query_level:"none"}`,
			sub:    `{index:1, backend:"cold", addr:"10.0.0.2:3306", cold:false, sql:"SET time_zone = '+08:00'", args:[]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Statement = r.Analyze(c.sql)
			in.Explain = true
			p, err := r.Route(in)
			if err != nil {
				t.Fatal(err)
			}
			lines := p.Explain(explainOptions())
			var prompts []string
			var info, sub string
			for _, l := range lines {
				switch {
				case l.Section == routing.SectionPrompts:
					prompts = append(prompts, l.Detail)
				case l.Step == "ROUTE_INFO":
					info = l.Detail
				case l.Step == "SUB_QUERY" && sub == "":
					sub = l.Detail
				}
			}
			found := false
			for _, pr := range prompts {
				found = found || strings.HasPrefix(pr, c.prompt)
			}
			if !found {
				t.Errorf("prompts %q, want one starting %q", prompts, c.prompt)
			}
			if info != c.info {
				t.Errorf("ROUTE_INFO\n got %s\nwant %s", info, c.info)
			}
			if !strings.HasPrefix(sub, c.sub) {
				t.Errorf("first SUB_QUERY\n got %s\nwant prefix %s", sub, c.sub)
			}
		})
	}
}

func TestExplainRefused(t *testing.T) {
	r := explainRouter(t)
	st := r.Analyze("SELECT id FROM orders WHERE order_time >= '2024-12-01'")
	_, err := r.Route(routing.Input{Statement: st, Hints: hint.Set{Level: hint.L1}})
	if !errors.Is(err, routing.ErrLevelViolation) {
		t.Fatalf("got %v, want ErrLevelViolation", err)
	}
	want := []routing.ExplainLine{
		{"Route Prompts", "ERROR", "Will not route: " + err.Error()},
		{"Route Plan", "SQL_PARSE", `{cmd:"COM_QUERY", kind:"SELECT", tables:"orders"}`},
		{"Route Plan", "ROUTE_INFO", `{refused:true, reason:"level_violation"}`},
	}
	checkLines(t, routing.ExplainRefused(st, err, explainOptions()), want)
}

func TestRefusalReason(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: L1 reaches cold data", routing.ErrLevelViolation), "level_violation"},
		{fmt.Errorf("wrapped: %w", routing.ErrNoTimeRange), "no_time_range"},
		{routing.ErrShardKeyFunction, "shard_key_function"},
		{routing.ErrNotMergeable, "not_mergeable"},
		{&hint.Error{Err: hint.ErrMalformedHint, Hint: "shadow=yes", Offset: 3, Fix: "write true or false"}, "hint_malformed"},
		{&hint.Error{Err: hint.ErrHintConflict, Hint: "shadow", Offset: -1}, "hint_conflict"},
		{fmt.Errorf("%w: bound to hot", routing.ErrCrossBackendTx), "cross_backend_tx"},
		{routing.ErrCrossBackend, "cross_backend"},
		{routing.ErrNoShadowBackend, "no_shadow_backend"},
		{fmt.Errorf("%w: 1 of 2 rows", routing.ErrMixedShadow), "mixed_shadow"},
		{routing.ErrShadowConflict, "shadow_conflict"},
		{errors.New("something else"), "other"},
	}
	names := routing.RefusalReasons()
	for _, c := range cases {
		if got := routing.RefusalReason(c.err); got != c.want {
			t.Errorf("RefusalReason(%v) = %q, want %q", c.err, got, c.want)
		}
		if got := names[routing.RefusalIndex(c.err)]; got != c.want {
			t.Errorf("RefusalReasons()[RefusalIndex(%v)] = %q, want %q", c.err, got, c.want)
		}
	}
	if names[len(names)-1] != "other" {
		t.Errorf("last reason %q, want other", names[len(names)-1])
	}
}

func TestWriteExplain(t *testing.T) {
	lines := []routing.ExplainLine{
		{"Route Prompts", "INFO", "Will route to the default backend hot"},
		{"Route Plan", "SQL_PARSE", `{cmd:"COM_QUERY", kind:"SELECT", tables:""}`},
		{"Route Plan", "ROUTE_INFO", `{route_info_type:"USE_ROUTE_POLICY"}`},
	}
	want := "Route Prompts\n  [INFO] Will route to the default backend hot\nRoute Plan\n  > SQL_PARSE:{cmd:\"COM_QUERY\", kind:\"SELECT\", tables:\"\"}\n  > ROUTE_INFO:{route_info_type:\"USE_ROUTE_POLICY\"}\n"
	if got := text(lines); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
