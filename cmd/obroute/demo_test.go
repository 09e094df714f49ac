package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The demo needs no database server: it runs on embedded backends and prints its routes.
func TestDemoShowsEveryRoute(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"demo"}, &out, &out); code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"+08:00",                          // session state replayed on cold
		"USE_LAST_SESSION",                // the pinned transaction
		"did not touch the history store", // hot-only range
		"/* cold_query */",                // the cold sub-query of the split
		"split into 3 hot and 2 cold",     // the split explained
		"query level violated",            // L1 refused
		"function on the shard key",       // DATE(order_time) refused
		"shadow_audit_rows\n   | 1",       // shadow insert visible on shadow
		"production_rows_99\n   | 0",      // and not on production
		"routes by class",                 // stats
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(text, " ! ") && strings.Count(text, " ! ") != 2 {
		t.Errorf("demo printed unexpected errors:\n%s", text)
	}
	if t.Failed() {
		t.Log(text)
	}
}

// The example configuration and shard list of the README explain the README's query.
func TestExplainReadmeExample(t *testing.T) {
	var out bytes.Buffer
	code := run(context.Background(), []string{"explain", "-config", "../../examples/obroute.yaml", "-metadata", "../../examples/shards.csv",
		"-now", "2025-03-15", "-arg", "2024-12-01",
		"SELECT user_id, SUM(amount) AS total FROM orders WHERE order_time >= ? GROUP BY user_id ORDER BY total DESC LIMIT 10"}, &out, &out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"split into 3 hot and 1 cold", "/* cold_query */ select user_id", `addr:"10.0.0.2:3306"`, `MERGE:{order_by:"col2 DESC"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "secret") {
		t.Error("the output shows the example's password")
	}
}
