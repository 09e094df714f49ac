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
