package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// The first sub-query of a split SELECT to fail stops the others, whether or not the caller's
// context can be cancelled: the other sub-queries' server sessions are discarded (KILL QUERY is
// sent for their statements), their statements end on the server, and the statement returns the
// failure itself. Here both
// tables are locked by another session: the cold sub-query gives up after its lock_wait_timeout
// of 1 s, while the hot one would wait as long as the lock is held.
func TestSplitFailureStopsTheOtherSubQueries(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	var tables metadata.StaticSource
	names := map[*sqltest.Backend]string{}
	for i, b := range []*sqltest.Backend{cold, hot} {
		from := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0)
		names[b] = "orders_" + from.Format("200601")
		tables = append(tables, metadata.Table{Name: names[b], Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: b == hot})
		mustExec(t, b.DB, "CREATE TABLE "+names[b]+" (id INT PRIMARY KEY, order_time DATETIME NOT NULL)")
		mustExec(t, b.DB, fmt.Sprintf("INSERT INTO %s VALUES (1, '%s')", names[b], from.Add(48*time.Hour).Format(time.DateTime)))
	}
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: hot.DSN},
			{Name: "cold", Role: "cold", DSN: cold.DSN + "&lock_wait_timeout=1"},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	const query = "SELECT id FROM orders WHERE order_time >= '2024-12-01'"
	if n := rowCount(t, db, query); n != 2 {
		t.Fatalf("the split reads %d rows, want 2", n)
	}
	var hotSchema string
	if err := hot.DB.QueryRow("SELECT DATABASE()").Scan(&hotSchema); err != nil {
		t.Fatal(err)
	}
	waiting := fmt.Sprintf("DB = '%s' AND INFO LIKE '%%from %s%%' AND INFO NOT LIKE '%%PROCESSLIST%%'", hotSchema, names[hot])
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"context never done", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"cancellable context", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unlock := make([]func(), 0, 2)
			for _, b := range []*sqltest.Backend{hot, cold} {
				conn, err := b.DB.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(context.Background(), "LOCK TABLES "+names[b]+" WRITE"); err != nil {
					t.Fatal(err)
				}
				unlock = append(unlock, func() { conn.ExecContext(context.Background(), "UNLOCK TABLES"); conn.Close() })
			}
			// The locks are held until the statement returns, or for 20 s at most.
			returned := make(chan struct{})
			released := make(chan bool, 1)
			go func() {
				timer := time.NewTimer(20 * time.Second)
				defer timer.Stop()
				select {
				case <-returned:
					released <- false
				case <-timer.C:
					released <- true
				}
				for _, f := range unlock {
					f()
				}
			}()
			ctx, cancel := tc.ctx()
			defer cancel()
			before := c.Stats().QueriesKilled
			rows, err := db.QueryContext(ctx, query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			stillWaiting := len(processIDs(t, hot, waiting))
			for stillWaiting > 0 && len(processIDs(t, hot, waiting)) > 0 {
				if len(released) > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			gone := len(processIDs(t, hot, waiting)) == 0
			close(returned)
			if <-released {
				t.Fatalf("the split returned (%v) only once the hot table was unlocked: its hot sub-query was not stopped", err)
			}
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1205 {
				t.Fatalf("split with its cold sub-query timing out on a lock: %v, want the cold sub-query's error 1205 (lock wait timeout)", err)
			}
			if !gone {
				t.Errorf("the hot sub-query still waits for its lock on the server after the split failed")
			}
			// KILL QUERY is sent in the background; a server that saw the connection close first
			// has ended the statement already and answers it with an unknown thread id.
			t.Logf("QueriesKilled grew by %d", c.Stats().QueriesKilled-before)
			if n := rowCount(t, db, query); n != 2 {
				t.Fatalf("after the failure the split reads %d rows, want 2", n)
			}
		})
	}
}

// rowCount runs query on db and counts its rows.
func rowCount(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
