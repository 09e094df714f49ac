package shadow_test

import (
	"fmt"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/shadow"
)

func ExampleRule_Decide() {
	rule := &shadow.Rule{Shadow: config.Shadow{
		Mappings: []shadow.Mapping{{Production: "orders", Shadow: "orders_shadow"}},
		Tables:   []shadow.Table{{Name: "t_order", Algorithms: []string{"load_test_user"}}},
		Algorithms: []shadow.Algorithm{
			{Name: "sql_hint", Kind: shadow.KindHint},
			{Name: "load_test_user", Kind: shadow.KindValueMatch, Column: "user_id", Operation: shadow.OpInsert, Values: []string{"0"}},
		},
		DefaultAlgorithm: "sql_hint",
	}}
	if err := rule.Validate(nil); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []shadow.Condition{
		{Tables: []string{"t_order"}, Operation: shadow.OpInsert, Read: insertedUserID("0")},
		{Tables: []string{"t_order"}, Operation: shadow.OpInsert, Read: insertedUserID("42")},
		{Tables: []string{"t_order"}, Hint: true}, // e.g. /* shadow */ TRUNCATE TABLE t_order
	} {
		d := rule.Decide(c)
		fmt.Println(d.Shadow, d.Mappings, "-", d.Reason)
	}
	// Output:
	// true map[orders:orders_shadow] - shadow table "t_order": value_match algorithm "load_test_user" accepted the insert values of column "user_id"
	// false map[] - production: none of the statement's shadow tables has an algorithm that accepted
	// true map[orders:orders_shadow] - the shadow hint is on for a statement other than DML: all mappings apply
}

// insertedUserID is the Read of an INSERT that gives user_id the value v (the
// router reads it as the server compares it, by the column's type).
func insertedUserID(v string) func(table, column string, set shadow.ValueSet) (shadow.Verdict, string) {
	return func(_, column string, set shadow.ValueSet) (shadow.Verdict, string) {
		switch {
		case column != "user_id":
			return shadow.VerdictNone, ""
		case set.Contains(v):
			return shadow.VerdictShadow, ""
		}
		return shadow.VerdictProduction, ""
	}
}
