package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestInsertFractionAtPeriodBoundary: an INSERT at 23:59:59.999999 of a period's last day goes
// to the table that holds the value as MariaDB stores it. A DATETIME(6) key keeps the value (the
// old period's table); a DATETIME(0) key truncates it under the default sql_mode (the old
// period's table) and rounds it with TIME_ROUND_FRACTIONAL set in the client session (the new
// period's table). The rows are read back on the backend. The shard metadata lives on another
// backend, so the hot backend's server and columns are read back on their own.
func TestInsertFractionAtPeriodBoundary(t *testing.T) {
	bs := sqltest.Shared(t, "fracmeta", "frachot")
	meta, hot := bs[0], bs[1]
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, meta.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for table, typ := range map[string]string{"events": "DATETIME(6)", "visits": "DATETIME"} {
		for _, p := range []struct{ suffix, min, max string }{
			{"202611", "2026-11-01", "2026-11-30 23:59:59"},
			{"202612", "2026-12-01", "2026-12-31 23:59:59"},
		} {
			hot.Exec(t, fmt.Sprintf("CREATE TABLE %s_%s (id INT PRIMARY KEY, at %s NOT NULL)", table, p.suffix, typ))
			meta.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, 1, 'hot')", table+"_"+p.suffix, p.min, p.max)
		}
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	window := config.HotWindow{Months: 2}
	cfg := &config.Config{
		Backends: []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "meta", Role: "cold", DSN: meta.DSN}},
		TimeTables: []config.TimeTable{
			{Table: "events", ShardKey: "at", HotWindow: window},
			{Table: "visits", ShardKey: "at", HotWindow: window},
		},
		Metadata: config.Metadata{Backend: "meta"},
	}
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()

	const last = "2026-11-30 23:59:59.999999"
	if _, err := db.ExecContext(ctx, "INSERT INTO events (id, at) VALUES (1, '"+last+"')"); err != nil {
		t.Fatalf("INSERT at %s into a DATETIME(6) key: %v", last, err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO events (id, at) VALUES (2, ?)", last); err != nil {
		t.Fatalf("INSERT at %s (an argument) into a DATETIME(6) key: %v", last, err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (1, '"+last+"')"); err != nil {
		t.Fatalf("INSERT at %s into a DATETIME(0) key, default sql_mode: %v", last, err)
	}
	sess, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.ExecContext(ctx, "SET sql_mode = CONCAT(@@sql_mode, ',TIME_ROUND_FRACTIONAL')"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (2, '"+last+"')"); err != nil {
		t.Fatalf("INSERT at %s into a DATETIME(0) key with TIME_ROUND_FRACTIONAL: %v", last, err)
	}
	if _, err := sess.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (3, ?)", time.Date(2026, 11, 30, 23, 59, 59, 600000000, time.UTC)); err != nil {
		t.Fatalf("INSERT of a time.Time into a DATETIME(0) key with TIME_ROUND_FRACTIONAL: %v", err)
	}
	if _, err := sess.ExecContext(ctx, "SET sql_mode = DEFAULT"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (4, '2026-11-30 23:59:59.7')"); err != nil {
		t.Fatalf("INSERT into a DATETIME(0) key after SET sql_mode = DEFAULT: %v", err)
	}

	want := []struct {
		table string
		id    int
		at    string
	}{
		{"events_202611", 1, "2026-11-30 23:59:59.999999"},
		{"events_202611", 2, "2026-11-30 23:59:59.999999"},
		{"visits_202611", 1, "2026-11-30 23:59:59"},
		{"visits_202612", 2, "2026-12-01 00:00:00"},
		{"visits_202612", 3, "2026-12-01 00:00:00"},
		{"visits_202611", 4, "2026-11-30 23:59:59"},
	}
	for _, w := range want {
		var got string
		if err := hot.DB.QueryRowContext(ctx, "SELECT CAST(at AS CHAR) FROM "+w.table+" WHERE id = ?", w.id).Scan(&got); err != nil || got != w.at {
			t.Errorf("row %d in %s: %q, %v; want %q", w.id, w.table, got, err, w.at)
		}
	}
	for _, table := range []string{"events_202612", "visits_202611", "visits_202612"} {
		var n int
		if err := hot.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if wantN := map[string]int{"events_202612": 0, "visits_202611": 2, "visits_202612": 2}[table]; n != wantN {
			t.Errorf("%s holds %d rows, want %d", table, n, wantN)
		}
	}
}

// TestInsertFractionOfANewTable: a table that appears in the shard metadata after the first
// load has its shard-key column read with the refresh that lists it, so a fraction in its last
// second is routed without a restart; until the column is read, it is refused.
func TestInsertFractionOfANewTable(t *testing.T) {
	b := sqltest.Shared(t, "fracnew")[0]
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, b.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, "CREATE TABLE visits_202611 (id INT PRIMARY KEY, at DATETIME NOT NULL)")
	b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES ('visits_202611', '2026-11-01', '2026-11-30 23:59:59', 1)")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: b.DSN}},
		TimeTables: []config.TimeTable{{Table: "visits", ShardKey: "at", HotWindow: config.HotWindow{Months: 2}}},
		Metadata:   config.Metadata{Backend: "hot"},
	}
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (1, '2026-11-15 10:00:00')"); err != nil {
		t.Fatal(err)
	}
	// The next period's table: listed before it exists, then created.
	b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES ('visits_202612', '2026-12-01', '2026-12-31 23:59:59', 1)")
	if err := c.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, "CREATE TABLE visits_202612 (id INT PRIMARY KEY, at DATETIME(6) NOT NULL)")
	_, err = db.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (2, '2026-11-30 23:59:59.5')")
	if !errors.Is(err, routing.ErrNoTimeRange) || !strings.Contains(err.Error(), "visits_202612, whose shard-key column obroute has not read") {
		t.Fatalf("INSERT of a fraction while visits_202612's column is unread: %v; want ErrNoTimeRange naming it", err)
	}
	if err := c.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO visits (id, at) VALUES (2, '2026-11-30 23:59:59.5')"); err != nil {
		t.Fatalf("INSERT of a fraction after the refresh read visits_202612's column: %v", err)
	}
	var got string
	if err := b.DB.QueryRowContext(ctx, "SELECT CAST(at AS CHAR) FROM visits_202611 WHERE id = 2").Scan(&got); err != nil || got != "2026-11-30 23:59:59" {
		t.Errorf("row 2 in visits_202611: %q, %v; want it truncated there", got, err)
	}
}
