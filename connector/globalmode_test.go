package connector_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// A global sql_mode changed without a restart (SET GLOBAL) is seen by the server sessions
// opened after it: obroute reads what a new server session starts with and, when it is not what
// it read of the backend, reads the backend again before routing by it. With
// TIME_ROUND_FRACTIONAL the server rounds 23:59:59.7 into the next month: the row goes to the
// table whose span holds what the server stores, as on one table.
func TestFactsReadAgainAfterSetGlobalSQLMode(t *testing.T) {
	const modes = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
	hot := sqltest.MariaDB(t, "hot")[0]
	hot.Exec(t, "SET GLOBAL sql_mode = '"+modes+"'")
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	hot.Exec(t, "CREATE TABLE visits_all (id INT PRIMARY KEY, at DATETIME NOT NULL)")
	for _, p := range []struct{ suffix, min, max string }{
		{"202611", "2026-11-01", "2026-11-30 23:59:59"},
		{"202612", "2026-12-01", "2026-12-31 23:59:59"},
	} {
		hot.Exec(t, "CREATE TABLE visits_"+p.suffix+" (id INT PRIMARY KEY, at DATETIME NOT NULL)")
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, 1)", "visits_"+p.suffix, p.min, p.max)
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}},
		TimeTables: []config.TimeTable{{Table: "visits", ShardKey: "at", HotWindow: config.HotWindow{Months: 2}}},
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxIdleConns(0) // each statement on a new client session, and so a new server session
	const last = "2026-11-30 23:59:59.7"
	insert := func(id int) {
		t.Helper()
		q := fmt.Sprintf("INSERT INTO visits (id, at) VALUES (%d, '%s')", id, last)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		hot.Exec(t, fmt.Sprintf("SET STATEMENT sql_mode = @@global.sql_mode FOR INSERT INTO visits_all (id, at) VALUES (%d, '%s')", id, last))
	}
	insert(1)
	hot.Exec(t, "SET GLOBAL sql_mode = '"+modes+",TIME_ROUND_FRACTIONAL'")
	insert(2)
	hot.Exec(t, "SET GLOBAL sql_mode = '"+modes+"'")
	insert(3)

	const read = "SELECT id, CAST(at AS CHAR) FROM %s WHERE at >= '2026-11-01' ORDER BY id"
	got, want := rowsOf(t, db, fmt.Sprintf(read, "visits")), rowsOf(t, hot.DB, fmt.Sprintf(read, "visits_all"))
	if !slices.Equal(got, want) {
		t.Errorf("through obroute %v, one table %v", got, want)
	}
	for table, month := range map[string]string{"visits_202611": "2026-11", "visits_202612": "2026-12"} {
		if misplaced := rowsOf(t, hot.DB, "SELECT id FROM "+table+" WHERE DATE_FORMAT(at, '%Y-%m') <> '"+month+"'"); len(misplaced) > 0 {
			t.Errorf("%s holds rows outside its span: ids %v", table, misplaced)
		}
	}
}
