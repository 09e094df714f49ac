package config

import (
	"fmt"
	"strings"
	"time"
)

// The settings of the routing rules: time-sharded tables and the shadow rule. They are plain
// values, and the packages that apply a rule (routing, shadow, tiering) read these types; what
// only they know (the calendar of a hot window, the shadow algorithms) is checked where the
// configuration is applied, before any of them runs.

// TimeTable is a logical table split by time into physical tables, the recent ones on the hot
// store and the older ones on the history store. Its physical tables are the shard metadata's
// rows named Table_ followed by a suffix that starts with a digit (orders → orders_202501,
// orders_2025_02, …; never orders_items_202501).
type TimeTable struct {
	// Table is the logical table name the application queries, e.g. "orders".
	Table string `yaml:"table"`
	// ShardKey is the DATETIME, DATE or TIMESTAMP column the table is split by, e.g.
	// "order_time".
	ShardKey string `yaml:"shard_key"`
	// ShardKeyType is the shard key's column type: "datetime", "date" or "timestamp". obroute
	// reads it from information_schema.COLUMNS of the physical tables and refuses statements
	// where the two differ; declared, it holds where the backends have not been read (a backend
	// down at the first statement, obroute explain with a metadata file). "" leaves it to the
	// backends.
	ShardKeyType string `yaml:"shard_key_type"`
	// HotWindow is the hot window: rows at or after its boundary are hot.
	HotWindow HotWindow `yaml:"hot_window"`
	// DefaultRange, when positive, is applied to a statement without a shard-key range: it then
	// reads [now-DefaultRange, +inf) and EXPLAIN ROUTE says so. Zero refuses such statements,
	// since an implicit range silently drops rows.
	DefaultRange time.Duration `yaml:"default_range"`
	// AllowFullScan lets a statement without a shard-key range read every physical table, hot
	// and cold, with the exact merge. Such a statement counts as one that reaches the history
	// store: a declared L1 refuses it and RequireColdQuery applies. It cannot be set with
	// DefaultRange, which gives such statements a range instead.
	AllowFullScan bool `yaml:"allow_full_scan"`
	// RequireColdQuery refuses statements that read the history store unless they carry the
	// cold_query hint.
	RequireColdQuery bool `yaml:"require_cold_query"`
	// AllowColdWrites allows INSERT, UPDATE and DELETE on tables of the history store.
	AllowColdWrites bool `yaml:"allow_cold_writes"`
	// Budgets are the time budgets of the query levels, applied as context deadlines.
	Budgets Budgets `yaml:"budgets"`
}

// HotWindow is the recent span whose rows live in hot tables; exactly one field is set.
type HotWindow struct {
	// Days is the last N calendar days, today included.
	Days int `yaml:"days"`
	// Months is the current calendar month and N months before it.
	Months int `yaml:"months"`
}

// Budgets are the time budgets of the query levels; zero means no budget.
type Budgets struct {
	// L1 is the budget of L1 statements.
	L1 time.Duration `yaml:"l1"`
	// L2 is the budget of L2 statements.
	L2 time.Duration `yaml:"l2"`
	// L3 is the budget of L3 statements.
	L3 time.Duration `yaml:"l3"`
}

// Shadow is ShardingSphere's shadow rule: which production backend has which shadow backend,
// and the algorithms that make a statement shadow traffic.
type Shadow struct {
	// Mappings are the production → shadow backend pairs.
	Mappings []ShadowMapping `yaml:"mappings"`
	// Tables are the shadow tables; their order decides between several tables of one statement.
	Tables []ShadowTable `yaml:"tables"`
	// DefaultAlgorithm names a hint algorithm consulted for DML statements that name no shadow
	// table; empty means none.
	DefaultAlgorithm string `yaml:"default_algorithm"`
	// Algorithms are the algorithms the tables and the default refer to.
	Algorithms []ShadowAlgorithm `yaml:"algorithms"`
}

// ShadowMapping maps a production backend to its shadow backend, by name.
type ShadowMapping struct {
	// Production is the production backend.
	Production string `yaml:"production"`
	// Shadow is the backend that receives the production backend's shadow traffic.
	Shadow string `yaml:"shadow"`
}

// ShadowTable is one shadow table.
type ShadowTable struct {
	// Name is the table name, compared case-insensitively.
	Name string `yaml:"name"`
	// Algorithms are the names of the algorithms that can make a statement on this table shadow
	// traffic.
	Algorithms []string `yaml:"algorithms"`
	// Backends are the production backends whose mapping applies when this table decides; empty
	// means all mappings.
	Backends []string `yaml:"backends"`
}

// ShadowAlgorithm is one named shadow algorithm.
type ShadowAlgorithm struct {
	// Name identifies the algorithm in ShadowTable.Algorithms and DefaultAlgorithm.
	Name string `yaml:"name"`
	// Kind is hint, value_match or regex_match.
	Kind string `yaml:"kind"`
	// Column is the column a value_match or regex_match algorithm reads.
	Column string `yaml:"column"`
	// Operation is the DML operation a column algorithm applies to: insert, update, delete or
	// select.
	Operation string `yaml:"operation"`
	// Values are the shadow values of Column, for value_match.
	Values []string `yaml:"values"`
	// Regex matches the whole shadow value of Column, for regex_match.
	Regex string `yaml:"regex"`
}

// validateRules checks the rules' names, references and counts; seen holds the configured
// backends.
func (c *Config) validateRules(seen map[string]bool) error {
	if c.Shadow != nil {
		if len(c.Shadow.Mappings) > 0 && len(c.Shadow.Algorithms) == 0 && len(c.Shadow.Tables) == 0 && c.Shadow.DefaultAlgorithm == "" {
			// Mappings only: the shadow hint decides, as ShardingSphere's default hint algorithm.
			c.Shadow.Algorithms = []ShadowAlgorithm{{Name: "hint", Kind: "hint"}}
			c.Shadow.DefaultAlgorithm = "hint"
		}
		for _, m := range c.Shadow.Mappings {
			for _, b := range []string{m.Production, m.Shadow} {
				if !seen[b] {
					return errorf("shadow.mappings."+m.Production, "backend %q is not configured; name one of %s", b, c.backendNames())
				}
			}
		}
	}
	for i, t := range c.TimeTables {
		if t.Table == "" || t.ShardKey == "" {
			return errorf(fmt.Sprintf("time_tables[%d]", i), "a time-sharded table needs table and shard_key, e.g. time_tables.orders.shard_key=order_time")
		}
		switch strings.ToLower(t.ShardKeyType) {
		case "", "datetime", "date", "timestamp":
		default:
			return errorf("time_tables."+t.Table+".shard_key_type", "%q is not a shard-key type; write datetime, date or timestamp (or leave it out: obroute reads it from the backends)", t.ShardKeyType)
		}
		if t.HotWindow.Days < 0 || t.HotWindow.Months < 0 {
			return errorf("time_tables."+t.Table+".hot_window", "days=%d months=%d: a window cannot be negative; set one of days or months", t.HotWindow.Days, t.HotWindow.Months)
		}
	}
	return nil
}
