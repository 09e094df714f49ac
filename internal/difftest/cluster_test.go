package difftest_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// The seed of the differential tests: -args -seed=N or OBROUTE_DIFF_SEED=N replays a run; by
// default every run draws a new one and logs it.
var seedFlag = flag.Uint64("seed", 0, "seed of the differential tests' data and queries (0: random, logged)")

// EnvSeed names the environment variable that fixes the differential tests' seed.
const EnvSeed = "OBROUTE_DIFF_SEED"

func testSeed(t testing.TB) uint64 {
	seed := *seedFlag
	if s := os.Getenv(EnvSeed); seed == 0 && s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not an unsigned integer", EnvSeed, s)
		}
		seed = v
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())%1_000_000_000 + 1
	}
	t.Logf("seed %d (replay with %s=%d or go test -run '%s' -args -seed=%d)", seed, EnvSeed, seed, t.Name(), seed)
	return seed
}

// The data set spans July 2024 to March 2025; the clock stands on 2025-03-15 and the hot window
// is the current month plus two, so the boundary is 2025-01-01: six cold tables, three hot ones.
var (
	dataFrom = time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	dataTo   = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	boundary = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clockNow = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	window   = metadata.HotWindow{Months: 2}
)

// cluster is the differential setup: a reference server with the whole data set in one table
// named like the logical table, hot and cold servers with the monthly tables, and obroute over
// hot and cold.
type cluster struct {
	ref, hot, cold *sqltest.Backend
	refDB          *sql.DB // plain go-sql-driver/mysql to the reference
	conn           *connector.Connector
	db             *sql.DB // obroute over hot + cold
	orders         []difftest.Order
	tables         []metadata.Table
}

// newCluster starts the three servers, loads n orders drawn from seed and opens obroute with a
// fixed clock. The cold server keeps a general log when coldLog is set.
func newCluster(t testing.TB, seed uint64, n int, coldLog bool) *cluster {
	t.Helper()
	ref := sqltest.MariaDB(t, "ref")[0]
	hot := sqltest.MariaDB(t, "hot")[0]
	cold := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: coldLog}, "cold")[0]
	c := &cluster{ref: ref, hot: hot, cold: cold}
	c.orders = difftest.GenerateOrders(seed, dataFrom, dataTo, n)
	c.tables = difftest.MonthlyTables("orders", dataFrom, dataTo.AddDate(0, -1, 0), boundary)

	ref.Exec(t, fmt.Sprintf(difftest.CreateTableSQL, "orders"))
	for _, s := range difftest.InsertSQL("orders", c.orders, 1000) {
		ref.Exec(t, s)
	}
	parts := difftest.Split(c.orders, c.tables)
	if len(parts[""]) > 0 {
		t.Fatalf("%d orders fit no monthly table", len(parts[""]))
	}
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, tb := range c.tables {
		b := cold
		if tb.Hot {
			b = hot
		}
		b.Exec(t, fmt.Sprintf(difftest.CreateTableSQL, tb.Name))
		for _, s := range difftest.InsertSQL(tb.Name, parts[tb.Name], 1000) {
			b.Exec(t, s)
		}
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	c.refDB = openMySQL(t, ref.DSN)
	c.conn, c.db = openObroute(t, hot, cold, clockNow, window)
	return c
}

func openMySQL(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openObroute opens obroute over hot and cold, time routing orders on order_time with the
// shard metadata read from hot, and the clock fixed at now.
func openObroute(t testing.TB, hot, cold *sqltest.Backend, now time.Time, w metadata.HotWindow) (*connector.Connector, *sql.DB) {
	t.Helper()
	return openObrouteConfig(t, &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: hot.DSN},
			{Name: "cold", Role: "cold", DSN: cold.DSN},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow(w)}},
		Metadata:   config.Metadata{Backend: "hot"},
	}, now)
}

// openObrouteConfig opens obroute with cfg and the clock fixed at now.
func openObrouteConfig(t testing.TB, cfg *config.Config, now time.Time) (*connector.Connector, *sql.DB) {
	t.Helper()
	conn, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return conn, db
}
