package shadow

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestValidate(t *testing.T) {
	backends := map[string]bool{"ds": true, "ds_shadow": true, "ds2": true, "ds2_shadow": true}
	isBackend := func(name string) bool { return backends[name] }
	for _, tc := range []struct {
		name   string
		change func(r *Rule)
		want   string // a phrase the error must contain; "" means valid
	}{
		{name: "example rule is valid", change: func(*Rule) {}},
		{name: "ShardingSphere spellings accepted", change: func(r *Rule) {
			r.Algorithms[0].Kind = "SIMPLE_HINT"
			r.Algorithms[1].Kind, r.Algorithms[1].Operation = "VALUE_MATCH", "INSERT"
		}},
		{name: "unknown production backend", change: func(r *Rule) { r.Mappings[0].Production = "dx" },
			want: `mapping 1: production backend "dx" is not a configured backend`},
		{name: "unknown shadow backend", change: func(r *Rule) { r.Mappings[1].Shadow = "nowhere" },
			want: `mapping 2: shadow backend "nowhere" is not a configured backend`},
		{name: "mapping to itself", change: func(r *Rule) { r.Mappings[0].Shadow = "ds" },
			want: `backend "ds" is mapped to itself`},
		{name: "empty mapping", change: func(r *Rule) { r.Mappings[0].Shadow = "" },
			want: "mapping 1: give both production and shadow backend names"},
		{name: "production mapped twice", change: func(r *Rule) { r.Mappings[1].Production = "ds" },
			want: `production backend "ds" is mapped twice`},
		{name: "shadow backend also production", change: func(r *Rule) {
			r.Mappings[1] = Mapping{Production: "ds_shadow", Shadow: "ds2_shadow"}
		}, want: `backend "ds_shadow" is both a shadow backend and a production backend`},
		{name: "duplicate algorithm name", change: func(r *Rule) { r.Algorithms[2].Name = "sql_hint" },
			want: `algorithm "sql_hint" is defined twice`},
		{name: "algorithm without name", change: func(r *Rule) { r.Algorithms = append(r.Algorithms, Algorithm{Kind: KindHint}) },
			want: "algorithm 6 has no name"},
		{name: "unknown kind", change: func(r *Rule) { r.Algorithms[0].Kind = "class_based" },
			want: `algorithm "sql_hint": unknown kind "class_based"; use hint, value_match or regex_match`},
		{name: "hint with column", change: func(r *Rule) { r.Algorithms[0].Column = "user_id" },
			want: "a hint algorithm takes no column"},
		{name: "value_match without column", change: func(r *Rule) { r.Algorithms[1].Column = "" },
			want: `algorithm "user_id_insert": value_match needs the column`},
		{name: "value_match without values", change: func(r *Rule) { r.Algorithms[1].Values = nil },
			want: "value_match needs values"},
		{name: "bad operation", change: func(r *Rule) { r.Algorithms[1].Operation = "upsert" },
			want: `operation "upsert": use insert, update, delete or select`},
		{name: "missing operation", change: func(r *Rule) { r.Algorithms[1].Operation = "" },
			want: `operation "": use insert`},
		{name: "bad regex", change: func(r *Rule) { r.Algorithms[3].Regex = "test-(" },
			want: `algorithm "mail_regex": regex "test-(" does not compile`},
		{name: "regex_match without regex", change: func(r *Rule) { r.Algorithms[3].Regex = "" },
			want: "regex_match needs a regex"},
		{name: "unknown default algorithm", change: func(r *Rule) { r.DefaultAlgorithm = "nope" },
			want: `default algorithm "nope" is not among the algorithms`},
		{name: "default algorithm not hint", change: func(r *Rule) { r.DefaultAlgorithm = "user_id_insert" },
			want: "the default algorithm must be of kind hint"},
		{name: "table uses unknown algorithm", change: func(r *Rule) { r.Tables[0].Algorithms[1] = "missing" },
			want: `table "t_order" uses algorithm "missing", which is not among the algorithms`},
		{name: "table without algorithms", change: func(r *Rule) { r.Tables[0].Algorithms = nil },
			want: `table "t_order" has no algorithms`},
		{name: "table listed twice", change: func(r *Rule) { r.Tables[2].Name = "t_user" },
			want: `table "t_user" is listed twice`},
		{name: "table without name", change: func(r *Rule) { r.Tables[0].Name = "" },
			want: "table 1 has no name"},
		{name: "table backend not a production backend", change: func(r *Rule) { r.Tables[1].Backends = []string{"ds_shadow"} },
			want: `table "T_User" lists backend "ds_shadow", which is not the production backend of any mapping`},
		{name: "tables without mappings", change: func(r *Rule) { r.Mappings = nil; r.Tables = r.Tables[:1] },
			want: "no mappings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := exampleRule()
			tc.change(r)
			err := r.Validate(isBackend)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidRule) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate error = %v\nwant ErrInvalidRule containing %q", err, tc.want)
			}
			defer func() {
				if recover() == nil {
					t.Error("a rule that failed Validate can still Decide")
				}
			}()
			r.Decide(Condition{})
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	r := exampleRule()
	r.Mappings[0].Production = "dx"
	r.Algorithms[3].Regex = "("
	err := r.Validate(func(n string) bool { return n != "dx" })
	for _, want := range []string{`"dx"`, `regex "("`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestRuleYAML(t *testing.T) {
	const doc = `
mappings:
  - {production: ds, shadow: ds_shadow}
tables:
  - name: t_order
    algorithms: [user_id_insert]
    backends: [ds]
default_algorithm: sql_hint
algorithms:
  - {name: sql_hint, kind: hint}
  - {name: user_id_insert, kind: value_match, column: user_id, operation: insert, values: ["0"]}
  - {name: mail, kind: regex_match, column: email, operation: select, regex: 'test-.*'}
`
	var r Rule
	if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if r.DefaultAlgorithm != "sql_hint" || r.Tables[0].Backends[0] != "ds" || r.Mappings[0].Shadow != "ds_shadow" ||
		r.Algorithms[1].Values[0] != "0" || r.Algorithms[2].Regex != "test-.*" || r.Algorithms[1].Operation != OpInsert {
		t.Errorf("decoded rule %+v", r)
	}
	d := r.Decide(Condition{Tables: []string{"t_order"}, Operation: OpInsert, Read: textValues("user_id", "0")})
	if !d.Shadow || d.Mappings["ds"] != "ds_shadow" {
		t.Errorf("Decide = %+v, want shadow via ds_shadow", d)
	}
}
