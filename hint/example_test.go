package hint_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/obroute/obroute/hint"
)

// A load test marks its whole request as shadow traffic; every statement run
// with this context goes to the shadow backends.
func ExampleWithShadow() {
	ctx := hint.WithShadow(context.Background())
	fmt.Println(hint.FromContext(ctx))
	// Output: shadow=true
}

// Setters compose: each one changes one hint and keeps the others.
func ExampleWithLevel() {
	ctx := hint.WithLevel(hint.WithColdQuery(context.Background()), hint.L2)
	fmt.Println(hint.FromContext(ctx))
	// Output: cold_query=true, query_level=L2
}

func ExampleFromContext() {
	fmt.Println(hint.FromContext(context.Background()).IsZero())
	// Output: true
}

// Hint comments are removed from rest; other comments stay for the server.
func ExampleParseLeading() {
	hints, rest, err := hint.ParseLeading(
		"/* request_id=42 */ /*+ OBROUTE(shadow=true, query_level=L1) */ SELECT * FROM orders WHERE id = ?")
	fmt.Println(hints, err)
	fmt.Println(rest)
	// Output:
	// shadow=true, query_level=L1 <nil>
	// /* request_id=42 */ SELECT * FROM orders WHERE id = ?
}

// Teams moving from ShardingSphere keep their SHARDINGSPHERE_HINT comments.
func ExampleParseLeading_shardingSphere() {
	hints, rest, _ := hint.ParseLeading("/* SHARDINGSPHERE_HINT: SHADOW=true */ TRUNCATE TABLE t_user")
	fmt.Println(hints.Shadow, "|", rest)
	// Output: shadow | TRUNCATE TABLE t_user
}

func ExampleParseLeading_error() {
	_, _, err := hint.ParseLeading("/*+ OBROUTE(query_level=L5) */ SELECT 1")
	fmt.Println(errors.Is(err, hint.ErrMalformedHint))
	fmt.Println(err)
	// Output:
	// true
	// hint: malformed hint "query_level=L5" at byte 12 of the statement: query_level takes L1, L2 or L3, e.g. OBROUTE(query_level=L2)
}

// A comment can add hints to the context's but never contradict them.
func ExampleCombine() {
	ctx := hint.WithShadow(context.Background())
	fromComment, _, _ := hint.ParseLeading("/*+ OBROUTE(shadow=false) */ DELETE FROM orders")
	_, err := hint.Combine(hint.FromContext(ctx), fromComment)
	fmt.Println(errors.Is(err, hint.ErrHintConflict))
	// Output: true
}

func ExampleStatementStart() {
	sql := "/* trace */ -- note\n  SELECT 1"
	fmt.Println(sql[hint.StatementStart(sql):])
	// Output: SELECT 1
}
