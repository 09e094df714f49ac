package shadow

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
)

var (
	allMappings = map[string]string{"ds": "ds_shadow", "ds2": "ds2_shadow"}
	dsOnly      = map[string]string{"ds": "ds_shadow"}
	ds2Only     = map[string]string{"ds2": "ds2_shadow"}
)

// exampleRule is the rule of the package doc's worked example, plus tables
// for the regex, order and Backends cases.
func exampleRule() *Rule {
	return &Rule{Shadow: config.Shadow{
		Mappings: []Mapping{{Production: "ds", Shadow: "ds_shadow"}, {Production: "ds2", Shadow: "ds2_shadow"}},
		Tables: []Table{
			{Name: "t_order", Algorithms: []string{"user_id_insert", "user_id_select"}},
			{Name: "T_User", Algorithms: []string{"sql_hint"}, Backends: []string{"ds"}},
			{Name: "t_mail", Algorithms: []string{"mail_regex"}, Backends: []string{"ds2"}},
			{Name: "t_audit", Algorithms: []string{"tenant_update"}, Backends: []string{"ds2"}},
			{Name: "t_tenant", Algorithms: []string{"tenant_update"}, Backends: []string{"ds"}},
		},
		DefaultAlgorithm: "sql_hint",
		Algorithms: []Algorithm{
			{Name: "sql_hint", Kind: KindHint},
			{Name: "user_id_insert", Kind: KindValueMatch, Column: "user_id", Operation: OpInsert, Values: []string{"0"}},
			{Name: "user_id_select", Kind: KindValueMatch, Column: "user_id", Operation: OpSelect, Values: []string{"0", "-1"}},
			{Name: "mail_regex", Kind: KindRegexMatch, Column: "email", Operation: OpInsert, Regex: `test-\d+@example\.com`},
			{Name: "tenant_update", Kind: KindValueMatch, Column: "tenant", Operation: OpUpdate, Values: []string{"shadow"}},
		},
	}}
}

func TestDecide(t *testing.T) {
	withTables := exampleRule()
	noDefault := exampleRule()
	noDefault.DefaultAlgorithm = ""
	defaultOnly := &Rule{Shadow: config.Shadow{
		Mappings:         []Mapping{{Production: "ds", Shadow: "ds_shadow"}, {Production: "ds2", Shadow: "ds2_shadow"}},
		DefaultAlgorithm: "h",
		Algorithms:       []Algorithm{{Name: "h", Kind: KindHint}},
	}}
	columnsOnly := &Rule{Shadow: config.Shadow{
		Mappings:   []Mapping{{Production: "ds", Shadow: "ds_shadow"}},
		Tables:     []Table{{Name: "t_order", Algorithms: []string{"v"}}},
		Algorithms: []Algorithm{{Name: "v", Kind: KindValueMatch, Column: "user_id", Operation: OpInsert, Values: []string{"0"}}},
	}}
	for _, r := range []*Rule{withTables, noDefault, defaultOnly, columnsOnly} {
		if err := r.Validate(nil); err != nil {
			t.Fatal(err)
		}
	}
	cols := textValues
	for _, tc := range []struct {
		name     string
		rule     *Rule
		c        Condition
		mappings map[string]string // nil: production
		reason   string            // a phrase the Reason must contain
		refused  string            // a phrase Refused must contain; "" for none
	}{
		{name: "default only, hint", rule: defaultOnly,
			c: Condition{Tables: []string{"t_order"}, Operation: OpSelect, Hint: true}, mappings: allMappings, reason: `default algorithm "h"`},
		{name: "default only, no hint", rule: defaultOnly,
			c: Condition{Tables: []string{"t_order"}, Operation: OpSelect}, reason: "no shadow hint for the default algorithm"},
		{name: "no shadow table, default accepts hint", rule: withTables,
			c: Condition{Tables: []string{"t_item"}, Operation: OpSelect, Hint: true}, mappings: allMappings, reason: "all mappings apply"},
		{name: "no shadow table, no default, hint", rule: noDefault,
			c: Condition{Tables: []string{"t_item"}, Operation: OpSelect, Hint: true}, reason: "production although the shadow hint is on"},
		{name: "no shadow table, no default, no hint", rule: noDefault,
			c: Condition{Tables: []string{"t_item"}, Operation: OpInsert}, reason: "no default algorithm"},
		{name: "table-specific hint, Backends filter", rule: withTables,
			c: Condition{Tables: []string{"t_user"}, Operation: OpSelect, Hint: true}, mappings: dsOnly, reason: `shadow table "t_user": hint algorithm "sql_hint"`},
		{name: "shadow table without hint is production, default not consulted", rule: withTables,
			c: Condition{Tables: []string{"t_user"}, Operation: OpDelete}, reason: "production: none of the statement's shadow tables"},
		{name: "value match insert", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: cols("user_id", "0")}, mappings: allMappings,
			reason: `value_match algorithm "user_id_insert" accepted the insert values of column "user_id"`},
		{name: "value match select, second value", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpSelect, Read: cols("user_id", "-1")}, mappings: allMappings,
			reason: `"user_id_select"`},
		{name: "value match select IN, all values shadow", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpSelect, Read: cols("user_id", "0", "user_id", "-1")}, mappings: allMappings},
		{name: "value mismatch", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: cols("user_id", "1")}, reason: "production"},
		{name: "multi-row insert partly shadow is refused", rule: withTables,
			c:       Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: cols("user_id", "0", "user_id", "1")},
			refused: `shadow table "t_order": value_match algorithm "user_id_insert" cannot decide from the insert values of column "user_id": 1 of 2 values are shadow values`},
		{name: "a value that cannot be read is refused", rule: withTables,
			c:       Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: unread},
			refused: "cannot decide from the insert values of column \"user_id\": an expression"},
		{name: "a refusal of an earlier table stops the walk", rule: withTables,
			c:       Condition{Tables: []string{"t_audit", "t_tenant"}, Operation: OpUpdate, Read: unread},
			refused: `shadow table "t_audit"`},
		{name: "column absent", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: cols("order_id", "0")}, reason: "production"},
		{name: "operation mismatch", rule: withTables,
			c: Condition{Tables: []string{"t_order"}, Operation: OpUpdate, Read: cols("user_id", "0")}, reason: "production"},
		{name: "value match is case-sensitive text", rule: withTables,
			c: Condition{Tables: []string{"t_audit"}, Operation: OpUpdate, Read: cols("tenant", "Shadow")}, reason: "production"},
		{name: "regex match", rule: withTables,
			c: Condition{Tables: []string{"t_mail"}, Operation: OpInsert, Read: cols("email", "test-17@example.com")}, mappings: ds2Only,
			reason: `regex_match algorithm "mail_regex"`},
		{name: "regex must match the whole value", rule: withTables,
			c: Condition{Tables: []string{"t_mail"}, Operation: OpInsert, Read: cols("email", "x-test-17@example.com")}, reason: "production"},
		{name: "regex operation mismatch", rule: withTables,
			c: Condition{Tables: []string{"t_mail"}, Operation: OpSelect, Read: cols("email", "test-1@example.com")}, reason: "production"},
		{name: "two matching tables: configured order decides", rule: withTables,
			c: Condition{Tables: []string{"t_tenant", "t_audit"}, Operation: OpUpdate, Read: cols("tenant", "shadow")}, mappings: ds2Only,
			reason: `shadow table "t_audit"`},
		{name: "hint algorithms before column algorithms", rule: withTables,
			c: Condition{Tables: []string{"t_order", "t_user"}, Operation: OpInsert, Hint: true, Read: cols("user_id", "0")}, mappings: dsOnly,
			reason: `shadow table "t_user": hint`},
		{name: "hint on, shadow table has only column algorithms", rule: withTables,
			c:      Condition{Tables: []string{"t_order"}, Operation: OpInsert, Hint: true, Read: cols("user_id", "5")},
			reason: "production although the shadow hint is on"},
		{name: "table names compared case-insensitively", rule: withTables,
			c: Condition{Tables: []string{"T_USER"}, Operation: OpSelect, Hint: true}, mappings: dsOnly},
		{name: "DDL by hint", rule: withTables,
			c: Condition{Tables: []string{"t_user"}, Hint: true}, mappings: allMappings, reason: "other than DML"},
		{name: "DDL without hint stays production", rule: withTables,
			c: Condition{Tables: []string{"t_user"}}, reason: "goes to shadow only with the shadow hint"},
		{name: "DDL by hint of a table algorithm (no default)", rule: noDefault,
			c: Condition{Tables: []string{"t_item"}, Hint: true}, mappings: allMappings},
		{name: "DDL with hint but no hint algorithm", rule: columnsOnly,
			c: Condition{Tables: []string{"t_order"}, Hint: true}, reason: "the shadow rule has no hint algorithm"},
		{name: "empty rule", rule: func() *Rule { r := &Rule{}; _ = r.Validate(nil); return r }(),
			c: Condition{Tables: []string{"t"}, Operation: OpInsert, Hint: true}, reason: "production"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.rule.Decide(tc.c)
			if d.Shadow != (tc.mappings != nil) || !maps.Equal(d.Mappings, tc.mappings) {
				t.Errorf("Decide = shadow %v %v (%s); want mappings %v", d.Shadow, d.Mappings, d.Reason, tc.mappings)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("Reason %q does not contain %q", d.Reason, tc.reason)
			}
			if tc.refused == "" && d.Refused != "" || !strings.Contains(d.Refused, tc.refused) {
				t.Errorf("Refused = %q, want it to contain %q", d.Refused, tc.refused)
			}
		})
	}
}

func TestDecideBeforeValidatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Decide on an unvalidated rule did not panic")
		}
	}()
	exampleRule().Decide(Condition{Operation: OpInsert, Hint: true})
}

func TestDecideAllocations(t *testing.T) {
	r := exampleRule()
	if err := r.Validate(nil); err != nil {
		t.Fatal(err)
	}
	c := Condition{Tables: []string{"t_order", "t_user"}, Operation: OpInsert, Read: textValues("user_id", "0")}
	if n := testing.AllocsPerRun(100, func() { _ = r.Decide(c) }); n != 0 {
		t.Errorf("Decide allocates %v times, want 0", n)
	}
}

func BenchmarkDecide(b *testing.B) {
	r := exampleRule()
	if err := r.Validate(nil); err != nil {
		b.Fatal(err)
	}
	c := Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: textValues("user_id", "7")}
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Decide(c)
	}
}

// textValues returns a Condition.Read for a statement whose values are given
// as column, text pairs: the verdict compares the texts with the set.
func textValues(kv ...string) func(table, column string, set ValueSet) (Verdict, string) {
	m := map[string][]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = append(m[kv[i]], kv[i+1])
	}
	return func(_, column string, set ValueSet) (Verdict, string) {
		vals := m[column]
		in := 0
		for _, v := range vals {
			if set.Contains(v) {
				in++
			}
		}
		switch {
		case len(vals) == 0:
			return VerdictNone, ""
		case in == len(vals):
			return VerdictShadow, ""
		case in == 0:
			return VerdictProduction, ""
		}
		return VerdictMixed, fmt.Sprintf("%d of %d values are shadow values", in, len(vals))
	}
}

// unread is a Condition.Read for a statement whose values cannot be read.
func unread(_, _ string, _ ValueSet) (Verdict, string) {
	return VerdictUnread, "an expression"
}
