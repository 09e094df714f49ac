package routing

import (
	"errors"
	"strings"
	"testing"
)

// A statement of any kind naming a physical table of a time-sharded table in any clause
// without a backend hint is refused with the backend that holds it; with a backend hint it
// runs there, and a temporary table of that name is the session's own. A name of that form that
// the metadata does not list, and the logical table, route as before.
func TestHiddenPhysicalTables(t *testing.T) {
	r := ddlRouter(t) // orders_202412, orders_202501 on cold; orders_202502, orders_202503 on hot
	route := func(sql string, sess *SessionState) (*Plan, error) {
		return r.Route(Input{Statement: r.Analyze(sql), Session: sess})
	}
	for _, tc := range []struct{ sql, backend string }{
		{"SELECT * FROM orders_202502", "hot"},
		{"SELECT COUNT(*) FROM ORDERS_202501", "cold"},
		{"SELECT i.id FROM items i JOIN orders_202412 o ON o.id = i.id", "cold"},
		{"SELECT id FROM items WHERE id IN (SELECT id FROM orders_202503)", "hot"},
		{"SELECT id FROM (SELECT id FROM orders_202503) d", "hot"},
		{"SELECT * FROM orders WHERE order_time >= '2025-03-01' AND id IN (SELECT id FROM orders_202502)", "hot"},
		{"INSERT INTO orders_202503 (id, order_time) VALUES (1, '2024-01-01')", "hot"},
		{"REPLACE INTO orders_202501 (id, order_time) VALUES (1, '2025-01-02')", "cold"},
		{"INSERT INTO items SELECT id FROM orders_202501", "cold"},
		{"UPDATE orders_202502 SET order_time = '2025-01-01' WHERE id = 20", "hot"},
		{"DELETE FROM orders_202502 WHERE id = 20", "hot"},
		{"CHECKSUM TABLE orders_202503", "hot"},
		{"SET @n = (SELECT COUNT(*) FROM orders_202501)", "cold"},
		{"LOCK TABLES orders_202502 WRITE", "hot"},
		{"CREATE TABLE kept AS SELECT * FROM orders_202502", "hot"},
	} {
		_, err := route(tc.sql, &SessionState{})
		if !errors.Is(err, ErrLogicalTable) || !strings.Contains(err.Error(), "OBROUTE(backend="+tc.backend+")") || !strings.Contains(err.Error(), "name orders") {
			t.Errorf("%s: %v, want ErrLogicalTable naming orders and the backend hint for %s", tc.sql, err, tc.backend)
		}
	}
	for _, tc := range []struct {
		sql, backend string
		sess         *SessionState
	}{
		{"/*+ OBROUTE(backend=cold) */ SELECT COUNT(*) FROM orders_202501", "cold", &SessionState{}},
		{"/*+ OBROUTE(backend=hot) */ UPDATE orders_202502 SET amount = 1 WHERE id = 20", "hot", &SessionState{}},
		{"/*+ OBROUTE(backend=hot) */ CHECKSUM TABLE orders_202503", "hot", &SessionState{}},
		{"INSERT INTO orders_202503 VALUES (1)", "cold", &SessionState{TempTables: map[string]string{"orders_202503": "cold"}}},
		{"SELECT * FROM orders_209901", "hot", &SessionState{}}, // not listed: a table of the default backend
		{"SELECT * FROM orders_x", "hot", &SessionState{}},
		{"CREATE TEMPORARY TABLE orders_202503 (id INT)", "hot", &SessionState{}},
	} {
		p, err := route(tc.sql, tc.sess)
		if err != nil || len(p.Targets) != 1 || p.Targets[0].Backend != tc.backend {
			t.Errorf("%s: %+v %v, want it on %s", tc.sql, p, err, tc.backend)
		}
	}
}
