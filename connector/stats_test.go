package connector_test

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	classes map[string]int
	refused map[string]int
	failed  int
	states  []connector.StateEvent
}

func newRecorder() *recorder {
	return &recorder{classes: map[string]int{}, refused: map[string]int{}}
}

func (r *recorder) OnRoute(_ context.Context, ev connector.RouteEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case ev.Plan() == nil:
		r.refused[ev.Refusal]++
	case ev.Err != nil:
		r.failed++
		r.classes[ev.Plan().Class]++
	default:
		r.classes[ev.Plan().Class]++
	}
}

func (r *recorder) OnStateChange(ev connector.StateEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, ev)
}

// TestStatsCountKnownWorkload drives a known workload through one client session and compares
// every counter with the count worked out by hand.
func TestStatsCountKnownWorkload(t *testing.T) {
	rec := newRecorder()
	f := newExplainFixture(t, connector.WithObserver(rec))
	ctx := context.Background()
	conn, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	run := func(ctx context.Context, query string, args ...any) error {
		rows, err := conn.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		return rows.Err()
	}
	must := func(ctx context.Context, query string, args ...any) {
		t.Helper()
		if err := run(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	refuse := func(ctx context.Context, query string) {
		t.Helper()
		if err := run(ctx, query); err == nil {
			t.Fatalf("%s: want a refusal", query)
		}
	}
	for id := 1; id <= 3; id++ {
		must(ctx, "SELECT note FROM items WHERE id = ?", id) // default ×3, opens hot
	}
	must(ctx, "SELECT note FROM audit_log")                                                                // default (static route), opens cold
	must(ctx, "SELECT note FROM audit_log")                                                                // default
	must(ctx, "SET time_zone = '+00:00'")                                                                  // forced (session state)
	must(ctx, "BEGIN")                                                                                     // not routed
	must(ctx, "INSERT INTO items VALUES (10, 'a')")                                                        // default: binds the transaction to hot
	must(ctx, "SELECT note FROM items WHERE id = ?", 10)                                                   // forced (in transaction)
	must(ctx, "COMMIT")                                                                                    // not routed
	must(ctx, "SELECT id FROM orders WHERE order_time >= '2025-02-01'")                                    // hot_only
	must(ctx, "SELECT user_id, SUM(amount) FROM orders WHERE order_time >= '2024-12-01' GROUP BY user_id") // split
	must(ctx, "SELECT id FROM orders WHERE order_time < '2024-12-20'")                                     // cold_only
	must(hint.WithShadow(ctx), "SELECT note FROM audit_log")                                               // shadow, opens shadow_cold
	refuse(hint.WithLevel(ctx, hint.L1), "SELECT id FROM orders WHERE order_time >= '2024-12-01'")         // level_violation
	refuse(ctx, "SELECT id FROM orders WHERE DATE(order_time) = '2025-03-01'")                             // shard_key_function
	refuse(ctx, "SELECT id FROM orders")                                                                   // no_time_range
	refuse(ctx, "SELECT id FROM orders")                                                                   // no_time_range
	refuse(ctx, "/*+ OBROUTE(shadow=maybe) */ SELECT 1")                                                   // hint_malformed
	refuse(ctx, "/*+ OBROUTE(backend=nowhere) */ SELECT 1")                                                // unknown_backend
	must(ctx, "EXPLAIN ROUTE SELECT note FROM items WHERE id = ?", 1)                                      // not routed

	s := f.c.Stats()
	wantRoutes := map[string]int64{"default": 6, "forced": 2, "hot_only": 1, "split": 1, "cold_only": 1, "shadow": 1}
	if !maps.Equal(s.Routes, wantRoutes) {
		t.Errorf("Routes = %v, want %v", s.Routes, wantRoutes)
	}
	wantRejections := map[string]int64{"level_violation": 1, "shard_key_function": 1, "no_time_range": 2, "hint_malformed": 1, "unknown_backend": 1}
	if !maps.Equal(s.Rejections, wantRejections) || s.Rejected != 6 {
		t.Errorf("Rejected = %d, Rejections = %v, want 6, %v", s.Rejected, s.Rejections, wantRejections)
	}
	// 15 distinct texts (the 3 statements not routed included), 14 once the two orders ranges
	// that differ only in their literal share one entry; repeats: items ×3, audit_log ×2,
	// no-range ×1, the orders range, and the statement EXPLAIN ROUTE explains (the items query,
	// cached). The statement refused for DATE(order_time) is kept by its text, with a note under
	// its literals' key: two entries.
	if s.ParseCache.Misses != 14 || s.ParseCache.Hits != 8 || s.ParseCache.Entries != 15 {
		t.Errorf("ParseCache = %+v, want 14 misses, 8 hits, 15 entries", s.ParseCache)
	}
	if s.ClientSessions != 1 || s.ServerSessionsOpened != 3 || s.ServerSessionsReplaced != 0 || s.ServerSessionsLost != 0 {
		t.Errorf("sessions: client %d, server opened %d replaced %d lost %d; want 1, 3, 0, 0",
			s.ClientSessions, s.ServerSessionsOpened, s.ServerSessionsReplaced, s.ServerSessionsLost)
	}
	if len(s.Backends) != 4 {
		t.Fatalf("Backends = %+v, want 4", s.Backends)
	}
	for i, name := range fixtureNames {
		b := s.Backends[i]
		if b.Name != name || b.Addr != f.addr[name] || b.Down || b.Failures != 0 {
			t.Errorf("Backends[%d] = %+v, want %s at %s, up, no failure", i, b, name, f.addr[name])
		}
	}
	rec.mu.Lock()
	wantClasses := map[string]int{"default": 6, "forced": 2, "hot_only": 1, "split": 1, "cold_only": 1, "shadow": 1}
	if !maps.Equal(rec.classes, wantClasses) || rec.failed != 0 {
		t.Errorf("observer routes %v (%d failed), want %v", rec.classes, rec.failed, wantClasses)
	}
	wantRefused := map[string]int{"level_violation": 1, "shard_key_function": 1, "no_time_range": 2, "hint_malformed": 1, "unknown_backend": 1}
	if !maps.Equal(rec.refused, wantRefused) {
		t.Errorf("observer refusals %v, want %v", rec.refused, wantRefused)
	}
	if len(rec.states) != 0 {
		t.Errorf("state changes %+v, want none", rec.states)
	}
	rec.mu.Unlock()

	// The cold backend goes away: its idle server session is replaced, and the new one fails.
	f.servers["cold"].Close()
	if err := run(ctx, "SELECT note FROM audit_log"); err == nil {
		t.Fatal("query on a closed backend succeeded")
	}
	s = f.c.Stats()
	if s.ServerSessionsReplaced != 1 || s.Routes["default"] != 7 || s.Backends[1].Failures != 1 || s.Backends[1].Down {
		t.Errorf("after closing cold: replaced %d, default routes %d, cold %+v; want 1, 7, 1 failure and up",
			s.ServerSessionsReplaced, s.Routes["default"], s.Backends[1])
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.failed != 1 {
		t.Errorf("observer saw %d failed statements, want 1", rec.failed)
	}
	if len(rec.states) != 1 || rec.states[0].Kind != connector.StateServerSessionReplaced || rec.states[0].Backend != "cold" || rec.states[0].Level != slog.LevelInfo {
		t.Errorf("state changes %+v, want one server_session_replaced of cold at info", rec.states)
	}
}
