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
		{Tables: []string{"t_order"}, Operation: shadow.OpInsert, Columns: map[string][]string{"user_id": {"0"}}},
		{Tables: []string{"t_order"}, Operation: shadow.OpInsert, Columns: map[string][]string{"user_id": {"42"}}},
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
