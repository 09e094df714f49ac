package connector_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// shadowWorld is production hot and cold and their shadow copies shadow_hot and shadow_cold,
// every one a throwaway mariadbd with its general log on, holding the same tables:
//
//	items       plain table (the default backend, hot)
//	audit_log   statically routed to cold
//	t_order     shadow table: value_match on user_id = 0 for every operation, nothing else
//	t_route     shadow table routed to cold: the hint first, then the same value_match
//	orders      time-sharded on order_time: orders_202411, orders_202412 on cold, orders_202501
//	            to orders_202503 on hot (the clock stands at 2025-03-15, hot window two months),
//	            listed in shard_metadata on hot and, for shadow traffic, on shadow_hot
//
// A statement naming no shadow table is shadow traffic by the shadow hint (the default
// algorithm).
type shadowWorld struct {
	prod, shadows []*sqltest.Backend // hot, cold; shadow_hot, shadow_cold
	cfg           string             // the obroute DSN
	now           time.Time
}

// shadowNow is the clock of the shadow world's connectors.
var shadowNow = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)

// shadowWorldTables are the tables of the world, with a column user_id and a column note.
var shadowWorldTables = []string{"items", "audit_log", "t_order", "t_route"}

// orderMonths are the physical tables of orders: name suffix, first day, cold or hot.
var orderMonths = []struct {
	suffix, min, max string
	hot              bool
}{
	{"202411", "2024-11-01", "2024-11-30 23:59:59", false},
	{"202412", "2024-12-01", "2024-12-31 23:59:59", false},
	{"202501", "2025-01-01", "2025-01-31 23:59:59", true},
	{"202502", "2025-02-01", "2025-02-28 23:59:59", true},
	{"202503", "2025-03-01", "2025-03-31 23:59:59", true},
}

func newShadowWorld(t *testing.T) *shadowWorld {
	t.Helper()
	all := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "cold", "shadow_hot", "shadow_cold")
	w := &shadowWorld{prod: all[:2], shadows: all[2:], now: shadowNow}
	ctx := context.Background()
	for i, b := range all {
		for _, tb := range shadowWorldTables {
			b.Exec(t, "CREATE TABLE "+tb+" (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
		}
		hot := i%2 == 0
		for _, m := range orderMonths {
			if m.hot == hot {
				b.Exec(t, "CREATE TABLE orders_"+m.suffix+" (id INT PRIMARY KEY, order_time DATETIME NOT NULL, note VARCHAR(64))")
			}
		}
		if b.Name == "hot" || b.Name == "shadow_hot" {
			if err := metadata.CreateTable(ctx, b.DB, metadata.DefaultTable); err != nil {
				t.Fatal(err)
			}
			for _, m := range orderMonths {
				b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)", "orders_"+m.suffix, m.min, m.max, m.hot)
			}
		}
	}
	w.truncateLogs(t) // the setup's own statements are no one's traffic
	var b strings.Builder
	for _, be := range all {
		fmt.Fprintf(&b, "backends.%s.dsn=%s;", be.Name, be.DSN)
	}
	b.WriteString("backends.shadow_hot.role=shadow;backends.shadow_cold.role=shadow;routes.audit_log=cold;routes.t_route=cold;" +
		"shadow.mappings.hot.shadow=shadow_hot;shadow.mappings.cold.shadow=shadow_cold;" +
		"shadow.algorithms.h.kind=hint;shadow.default_algorithm=h;")
	for _, op := range []string{"insert", "update", "delete", "select"} {
		fmt.Fprintf(&b, "shadow.algorithms.%s.kind=value_match;shadow.algorithms.%s.column=user_id;shadow.algorithms.%s.operation=%s;shadow.algorithms.%s.values=0;", op, op, op, op, op)
	}
	b.WriteString("shadow.tables.t_order.algorithms=insert,update,delete,select;shadow.tables.t_route.algorithms=h,insert,update,delete,select;" +
		"time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2;time_tables.orders.allow_cold_writes=true")
	w.cfg = "obroute:" + b.String()
	return w
}

// open returns a handle over a connector of its own (nothing read yet: no metadata, no
// definitions), closed at cleanup.
func (w *shadowWorld) open(t *testing.T) *sql.DB {
	t.Helper()
	cfg, err := config.ParseDSN(w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return w.now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

// truncateLogs empties the general logs of every backend.
func (w *shadowWorld) truncateLogs(t *testing.T) {
	t.Helper()
	for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
		b.Exec(t, "TRUNCATE TABLE mysql.general_log")
	}
}

// productionLines returns the lines of the production backends' general logs that contain
// marker ("" for every line), as "backend: command text".
func (w *shadowWorld) productionLines(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	for _, b := range w.prod {
		for _, e := range b.GeneralLog(t) {
			if marker == "" || strings.Contains(e.Text, marker) {
				out = append(out, b.Name+": "+e.Command+" "+e.Text)
			}
		}
	}
	return out
}

// shadowRows returns "id:user_id:note" of every row of table on b, by id.
func shadowRows(t *testing.T, b *sqltest.Backend, table string) []string {
	t.Helper()
	rows, err := b.DB.Query("SELECT id, IFNULL(user_id, -1), IFNULL(note, '') FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, user int
		var note string
		if err := rows.Scan(&id, &user, &note); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%d:%s", id, user, note))
	}
	return out
}
