package rules_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/rules"
	"github.com/obroute/obroute/internal/shadow"
)

func validConfig(t *testing.T, dsn string) *config.Config {
	t.Helper()
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const base = "obroute:backends.hot.dsn=app:pw@tcp(10.0.0.1:3306)/shop;backends.cold.dsn=app:pw@tcp(10.0.0.2:3306)/shop;" +
	"backends.shadow_hot.dsn=app:pw@tcp(10.0.1.1:3306)/shop;backends.shadow_hot.role=shadow"

// TestTimeTables: every setting of a time table reaches routing's time table.
func TestTimeTables(t *testing.T) {
	cfg := validConfig(t, base+";time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.days=90;"+
		"time_tables.orders.default_range=720h;time_tables.orders.require_cold_query=true;time_tables.orders.allow_cold_writes=true;"+
		"time_tables.orders.budgets.l1=200ms;time_tables.orders.budgets.l2=2s;time_tables.orders.budgets.l3=10s;"+
		"time_tables.events.shard_key=at;time_tables.events.hot_window.months=2")
	got, err := rules.TimeTables(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.TimeTable{
		{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Days: 90}, DefaultRange: 720 * time.Hour,
			RequireColdQuery: true, AllowColdWrites: true,
			Budgets: config.Budgets{L1: 200 * time.Millisecond, L2: 2 * time.Second, L3: 10 * time.Second}},
		{Table: "events", ShardKey: "at", HotWindow: config.HotWindow{Months: 2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TimeTables =\n%+v\nwant\n%+v", got, want)
	}
}

// TestShadow: the configured rule decides as configured, and a mappings-only rule gets the
// shadow hint as its algorithm.
func TestShadow(t *testing.T) {
	for _, tc := range []struct {
		name, dsn string
		byValue   bool
	}{
		{"mappings only", base + ";shadow.mappings.hot.shadow=shadow_hot", false},
		{"algorithm and table", base + ";shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.test.kind=value_match;" +
			"shadow.algorithms.test.column=user_id;shadow.algorithms.test.operation=insert;shadow.algorithms.test.values=0,-1;" +
			"shadow.algorithms.by-hint.kind=hint;shadow.default_algorithm=by-hint;shadow.tables.orders.algorithms=test", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rules.Shadow(validConfig(t, tc.dsn))
			if err != nil {
				t.Fatal(err)
			}
			d := r.Decide(shadow.Condition{Tables: []string{"items"}, Hint: true, Operation: shadow.OpSelect})
			if !d.Shadow || d.Mappings["hot"] != "shadow_hot" {
				t.Errorf("a statement with the shadow hint: %+v, want shadow with hot → shadow_hot", d)
			}
			if d := r.Decide(shadow.Condition{Tables: []string{"items"}, Operation: shadow.OpSelect}); d.Shadow {
				t.Errorf("a statement without the hint: %+v, want production", d)
			}
			if tc.byValue {
				value := "-1"
				read := func(_, column string, set shadow.ValueSet) (shadow.Verdict, string) {
					if column == "user_id" && set.Contains(value) {
						return shadow.VerdictShadow, ""
					}
					return shadow.VerdictProduction, ""
				}
				insert := shadow.Condition{Tables: []string{"orders"}, Operation: shadow.OpInsert, Read: read}
				if d := r.Decide(insert); !d.Shadow {
					t.Errorf("an INSERT of user_id -1 into orders: %+v, want shadow by value", d)
				}
				value = "7"
				if d := r.Decide(insert); d.Shadow {
					t.Errorf("an INSERT of user_id 7 into orders: %+v, want production", d)
				}
			}
		})
	}
	if r, err := rules.Shadow(validConfig(t, base)); r != nil || err != nil {
		t.Errorf("no shadow rule configured: %v, %v; want nil, nil", r, err)
	}
}

// TestErrors: what only routing, metadata and shadow know is refused with a *config.Error
// naming the setting.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, dsn, where, says string
		build                  func(*config.Config) error
	}{
		{"both days and months", base + ";time_tables.orders.shard_key=t;time_tables.orders.hot_window.days=3;time_tables.orders.hot_window.months=1",
			"time_tables.orders.hot_window", "set exactly one", timeTables},
		{"no window", base + ";time_tables.orders.shard_key=t", "time_tables.orders.hot_window", "neither days nor months", timeTables},
		{"regex does not compile", base + ";shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.a.kind=regex_match;shadow.algorithms.a.column=c;" +
			"shadow.algorithms.a.operation=insert;shadow.algorithms.a.regex=(;shadow.tables.t.algorithms=a", "shadow", "does not compile", shadowRule},
		{"unknown algorithm kind", base + ";shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.a.kind=sometimes;shadow.tables.t.algorithms=a",
			"shadow", "unknown kind", shadowRule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build(validConfig(t, tc.dsn))
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Where != tc.where || !strings.Contains(ce.Problem, tc.says) {
				t.Errorf("error %v; want a *config.Error at %s saying %q", err, tc.where, tc.says)
			}
		})
	}
}

func timeTables(cfg *config.Config) error { _, err := rules.TimeTables(cfg); return err }
func shadowRule(cfg *config.Config) error { _, err := rules.Shadow(cfg); return err }
