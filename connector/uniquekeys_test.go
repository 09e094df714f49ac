package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// A unique key added through obroute (with a backend hint on each physical table: on the logical
// table it is refused) after it read the physical tables' unique keys is read
// before the next REPLACE, INSERT IGNORE or ON DUPLICATE KEY UPDATE: events' new key (id) does
// not hold the shard key, so a REPLACE that one server resolves against February's row is refused
// (split, it would leave a second row of id 1 in March's table). Dropped again, the upserts are
// exact and accepted.
func TestUniqueKeyAddedThroughObroute(t *testing.T) {
	f := newTimeWrites(t, 0)
	f.both(t, "REPLACE INTO events (id, at, n) VALUES (2, '2025-03-10 10:00:00', 3)") // the facts are read
	f.both(t, "DELETE FROM events WHERE id = 1 AND at >= '2025-03-01' AND at < '2025-04-01'")
	// A unique key without the shard key is refused on the logical table (it would not be unique
	// across its physical tables); added to each physical table with a backend hint, it is read.
	f.refused(t, "ALTER TABLE events ADD UNIQUE KEY uid (id)", connector.ErrLogicalTable, "without the shard key")
	f.ref.Exec(t, "ALTER TABLE events ADD UNIQUE KEY uid (id)")
	for _, m := range timeWriteMonths {
		if _, err := f.db.Exec("/*+ OBROUTE(backend=hot) */ ALTER TABLE events_" + m + " ADD UNIQUE KEY uid (id)"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"REPLACE INTO events (id, at, n) VALUES (1, '2025-03-20 10:00:00', 9)",
		"INSERT IGNORE INTO events (id, at, n) VALUES (1, '2025-03-20 10:00:00', 9)",
		"INSERT INTO events (id, at, n) VALUES (1, '2025-03-20 10:00:00', 9) ON DUPLICATE KEY UPDATE n = 9",
	} {
		f.refused(t, q, connector.ErrNotMergeable, "uid (id)")
	}
	f.both(t, "ALTER TABLE events DROP KEY uid")
	f.both(t, "INSERT INTO events (id, at, n) VALUES (2, '2025-03-10 10:00:00', 9) ON DUPLICATE KEY UPDATE n = 10")
	f.refused(t, "CREATE UNIQUE INDEX uid2 ON events (id)", connector.ErrLogicalTable, "without the shard key")
	f.ref.Exec(t, "CREATE UNIQUE INDEX uid2 ON events (id)")
	for _, m := range timeWriteMonths {
		if _, err := f.db.Exec("/*+ OBROUTE(backend=hot) */ CREATE UNIQUE INDEX uid2 ON events_" + m + " (id)"); err != nil {
			t.Fatal(err)
		}
	}
	f.refused(t, "REPLACE INTO events (id, at, n) VALUES (2, '2025-02-20 10:00:00', 9)", connector.ErrNotMergeable, "uid2 (id)")
}

// A WITHOUT OVERLAPS unique key lists the period's columns, the shard key among them, but two
// rows of other shard-key values conflict when their periods overlap: a REPLACE that one server
// resolves against the overlapping row of February's table is refused (split, March's table
// would hold a second, overlapping row).
func TestUniqueKeyWithoutOverlaps(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "ref")
	hot, ref := bs[0], bs[1]
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	def := "(id INT NOT NULL, starts DATETIME NOT NULL, ends DATETIME NOT NULL, n INT NOT NULL DEFAULT 0, PERIOD FOR p(starts, ends), UNIQUE KEY u (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB"
	ref.Exec(t, "CREATE TABLE stays "+def)
	for _, m := range []string{"202502", "202503"} {
		from, _ := time.Parse("200601", m)
		hot.Exec(t, "CREATE TABLE stays_"+m+" "+def)
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, 1, 'hot')",
			"stays_"+m, from, from.AddDate(0, 1, 0).Add(-time.Second))
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}},
		TimeTables: []config.TimeTable{{Table: "stays", ShardKey: "starts", HotWindow: config.HotWindow{Months: 2}}},
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	seed := "INSERT INTO stays (id, starts, ends, n) VALUES (1, '2025-02-20 00:00:00', '2025-03-20 00:00:00', 1)"
	mustExec(t, db, seed)
	mustExec(t, ref.DB, seed)
	// One server skips the row: its period overlaps the row of id 1 in February's table.
	q := "INSERT IGNORE INTO stays (id, starts, ends, n) VALUES (1, '2025-03-05 00:00:00', '2025-03-10 00:00:00', 2)"
	mustExec(t, ref.DB, q)
	if _, err := db.Exec(q); !errorIs(err, connector.ErrNotMergeable, "u (id, p WITHOUT OVERLAPS)") {
		t.Errorf("%s: %v; want ErrNotMergeable naming the WITHOUT OVERLAPS key", q, err)
	}
	// MariaDB refuses these itself on such a table (1235); split, they must not run either.
	for _, q := range []string{
		"REPLACE INTO stays (id, starts, ends, n) VALUES (1, '2025-03-05 00:00:00', '2025-03-10 00:00:00', 2)",
		"INSERT INTO stays (id, starts, ends, n) VALUES (1, '2025-03-05 00:00:00', '2025-03-10 00:00:00', 2) ON DUPLICATE KEY UPDATE n = 3",
	} {
		if _, err := ref.DB.Exec(q); err == nil {
			t.Fatalf("%s on one server: no error", q)
		}
		if _, err := db.Exec(q); err == nil {
			t.Errorf("%s: no error; one server refuses it", q)
		}
	}
	got := rowsOf(t, hot.DB, "SELECT id, starts, ends, n FROM stays_202502 UNION ALL SELECT id, starts, ends, n FROM stays_202503")
	if want := rowsOf(t, ref.DB, "SELECT id, starts, ends, n FROM stays"); len(got) != len(want) || got[0] != want[0] {
		t.Errorf("stays holds %v, one server %v", got, want)
	}
}

// errorIs reports whether err is target with a message holding words.
func errorIs(err, target error, words string) bool {
	return errors.Is(err, target) && strings.Contains(err.Error(), words)
}
