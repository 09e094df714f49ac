package connector_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestTimeZoneOfNow: NOW() in a statement on a time-sharded table is read in the client
// session's time zone. A server session that set none has the backends' default, read back at
// start (here the time_zone DSN parameter '+03:00', or SYSTEM, which is UTC on the test
// server); SET time_zone on the client session replaces it for that session only.
func TestTimeZoneOfNow(t *testing.T) {
	b := sqltest.Shared(t, "tz")[0]
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, b.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, "CREATE TABLE orders_202503 (id INT PRIMARY KEY, order_time DATETIME NOT NULL)")
	b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES ('orders_202503', '2025-03-01', '2025-03-31 23:59:59', 1)")
	now := time.Date(2025, 3, 15, 10, 0, 0, 0, time.UTC)
	open := func(dsn string) (*connector.Connector, *sql.DB) {
		cfg := &config.Config{
			Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: dsn}},
			TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
			Metadata:   config.Metadata{Backend: "hot"},
		}
		c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(c)
		t.Cleanup(func() { db.Close() })
		return c, db
	}
	const q = "SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL 1 HOUR"
	folded := func(lines []connector.ExplainLine) string {
		for _, l := range lines {
			if strings.HasPrefix(l.Detail, "folded in time zone ") {
				return l.Detail
			}
		}
		return ""
	}
	sep := "?"
	if strings.Contains(b.DSN, "?") {
		sep = "&"
	}
	for _, c := range []struct{ dsn, want string }{
		{b.DSN + sep + "time_zone=%27%2B03%3A00%27", "folded in time zone +03:00: NOW() = 2025-03-15 13:00:00; NOW() - interval 1 HOUR = 2025-03-15 12:00:00"},
		{b.DSN, "folded in time zone SYSTEM (UTC): NOW() = 2025-03-15 10:00:00; NOW() - interval 1 HOUR = 2025-03-15 09:00:00"},
	} {
		conn, db := open(c.dsn)
		lines, err := conn.ExplainLines(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := folded(lines); got != c.want {
			t.Errorf("default time zone: %q, want %q", got, c.want)
		}
		sess, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.ExecContext(ctx, "SET time_zone = '-05:00'"); err != nil {
			t.Fatal(err)
		}
		want := "folded in time zone -05:00: NOW() = 2025-03-15 05:00:00; NOW() - interval 1 HOUR = 2025-03-15 04:00:00"
		if got := folded(explainRows(t, ctx, sess, q)); got != want {
			t.Errorf("after SET time_zone: %q, want %q", got, want)
		}
		// sess is held: this runs on another client session, which set no time zone.
		if got := folded(explainRows(t, ctx, db, q)); got != c.want {
			t.Errorf("another client session: %q, want %q", got, c.want)
		}
		sess.Close()
	}
}
