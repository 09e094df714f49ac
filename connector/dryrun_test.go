package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestDryRunSendsNothing: a connector in dry run routes and follows a client session's
// statements as a live one does — a transaction bound to its first statement's backend, a
// temporary table, SET, a split query and a split write — while its backends, whose general
// logs record every command, receive nothing.
func TestDryRunSendsNothing(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "cold")
	cfg, err := config.ParseDSN(fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold;"+
		"time_tables.orders.shard_key=order_time;time_tables.orders.shard_key_type=datetime;time_tables.orders.hot_window.months=2", bs[0].DSN, bs[1].DSN))
	if err != nil {
		t.Fatal(err)
	}
	month := func(m, last string) metadata.Table {
		from, _ := time.Parse(time.DateOnly, m+"-01")
		to, _ := time.Parse(time.DateTime, m+"-"+last+" 23:59:59")
		return metadata.Table{Name: "orders_" + m[:4] + m[5:], Min: from, Max: to, Hot: m >= "2025-01"}
	}
	shards := metadata.StaticSource{month("2024-12", "31"), month("2025-01", "31"), month("2025-02", "28"), month("2025-03", "31")}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithDryRun(), connector.WithMetadataSource(shards), connector.WithoutReadBack(), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []struct {
		sql     string
		query   bool
		refused bool
	}{
		{sql: "BEGIN"},
		{sql: "UPDATE items SET note = 'x' WHERE id = 1"},                            // binds the transaction to hot
		{sql: "SELECT note FROM audit_log WHERE id = 1", query: true, refused: true}, // cold: refused in it
		{sql: "COMMIT"},
		{sql: "CREATE TEMPORARY TABLE scratch (a INT)"},                                                            // default
		{sql: "INSERT INTO scratch VALUES (1)"},                                                                    // forced: its session
		{sql: "SELECT id FROM orders WHERE order_time >= '2024-12-20' AND order_time < '2025-01-10'", query: true}, // split
		{sql: "DELETE FROM orders WHERE order_time >= '2025-02-20' AND order_time < '2025-03-05'"},                 // two hot tables
		{sql: "SET time_zone = '+08:00'"},                                                                          // forced
		{sql: "SET @a = (SELECT 1)"},                                                                               // forced, read back
		{sql: "SELECT FOUND_ROWS()", query: true},                                                                  // forced
	} {
		if s.query {
			rows, err := conn.QueryContext(ctx, s.sql)
			if (err != nil) != s.refused {
				t.Fatalf("%s: err %v, refused %v", s.sql, err, s.refused)
			}
			if err == nil {
				if rows.Next() {
					t.Errorf("%s: a row from a dry run", s.sql)
				}
				rows.Close()
			}
		} else if _, err := conn.ExecContext(ctx, s.sql); err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
	}
	var a sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT @a").Scan(&a); err != nil || a.Valid {
		t.Errorf("SELECT @a: %v, %v; want NULL, what a server that knows nothing gives", a, err)
	}
	st := c.Stats()
	// default: the UPDATE opening the transaction, CREATE TEMPORARY TABLE, SELECT @a; forced: the
	// temporary table's INSERT, both SETs, FOUND_ROWS(); hot_only: the DELETE on two hot tables.
	want := map[string]int64{"default": 3, "forced": 4, "split": 1, "hot_only": 1}
	if !maps.Equal(st.Routes, want) || !maps.Equal(st.Rejections, map[string]int64{"cross_backend_tx": 1}) {
		t.Errorf("routes %v, rejections %v; want %v and one cross_backend_tx", st.Routes, st.Rejections, want)
	}
	for _, b := range bs {
		if log := b.GeneralLog(t); len(log) != 0 {
			t.Errorf("backend %s received %d commands from a dry run, the first %+v", b.Name, len(log), log[0])
		}
	}
}

// TestWithoutReadBackReadsNoShadowDefinition: with WithoutReadBack, a statement whose route
// depends on a shadow table's definition (a value_match algorithm on an INSERT without column
// list needs its columns' order) is refused saying so, instead of a definition read on a backend.
func TestWithoutReadBackReadsNoShadowDefinition(t *testing.T) {
	cfg, err := config.ParseYAML([]byte(`backends:
  - {name: hot, role: hot, dsn: "app:pw@tcp(127.0.0.1:1)/shop"}
  - {name: shadow_hot, role: shadow, dsn: "app:pw@tcp(127.0.0.1:1)/shop"}
shadow:
  mappings: [{production: hot, shadow: shadow_hot}]
  algorithms: [{name: test-users, kind: value_match, operation: insert, column: user_id, values: ["0"]}]
  tables: [{name: orders_log, algorithms: [test-users]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg, connector.WithDryRun(), connector.WithoutReadBack())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Explain(context.Background(), "INSERT INTO orders_log VALUES (1, 0, 'load test')")
	if err == nil || !strings.Contains(err.Error(), "which this connector does not read (WithoutReadBack)") {
		t.Fatalf("err = %v, want the refusal naming WithoutReadBack", err)
	}
}

// TestDryRunUnknownState: a SET whose value only a server computes fails in a dry run with
// ErrDryRunUnknown, naming the assignment, instead of recording a value the dry server session
// made up (NULL); a SET of literals, a user variable's (no route depends on one) and SET NAMES
// or TRANSACTION are followed as before. MariaDB runs every statement, and holds a value for
// each variable, not the NULL a dry server session answers.
func TestDryRunUnknownState(t *testing.T) {
	b := sqltest.Shared(t, "dryunknown")[0]
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=app:pw@tcp(127.0.0.1:1)/shop;backends.cold.dsn=app:pw@tcp(127.0.0.1:1)/shop;" +
		"time_tables.orders.shard_key=order_time;time_tables.orders.shard_key_type=datetime;time_tables.orders.hot_window.months=2")
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg, connector.WithDryRun(), connector.WithMetadataSource(metadata.StaticSource{}), connector.WithoutReadBack())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	ctx := context.Background()
	dry, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dry.Close()
	live, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for _, s := range []struct {
		sql, variable string
		unknown       bool
	}{
		{sql: "SET time_zone = '+08:00'", variable: "@@session.time_zone"},
		{sql: "SET sql_mode = 'ANSI'", variable: "@@session.sql_mode"},
		{sql: "SET NAMES utf8mb4", variable: "@@session.character_set_client"},
		{sql: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", variable: "@@session.tx_isolation"},
		{sql: "SET autocommit = 0", variable: "@@session.autocommit"},
		{sql: "SET @x = (SELECT 1)", variable: "@x"},
		{sql: "SET time_zone = @@global.time_zone", variable: "@@session.time_zone", unknown: true},
		{sql: "SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')", variable: "@@session.sql_mode", unknown: true},
		{sql: "SET time_zone = DEFAULT", variable: "@@session.time_zone", unknown: true},
		{sql: "SET @z = '+03:00'", variable: "@z"},
		{sql: "SET time_zone = @z", variable: "@@session.time_zone", unknown: true},
	} {
		if _, err := live.ExecContext(ctx, s.sql); err != nil {
			t.Fatalf("MariaDB: %s: %v", s.sql, err)
		}
		var v sql.NullString
		if err := live.QueryRowContext(ctx, "SELECT "+s.variable).Scan(&v); err != nil || !v.Valid {
			t.Errorf("MariaDB: after %s, %s is %v (%v)", s.sql, s.variable, v, err)
		}
		_, err := dry.ExecContext(ctx, s.sql)
		switch {
		case s.unknown && (!errors.Is(err, connector.ErrDryRunUnknown) || !strings.Contains(err.Error(), s.sql[len("SET "):])):
			t.Errorf("dry run: %s: err %v, want ErrDryRunUnknown naming the assignment", s.sql, err)
		case !s.unknown && err != nil:
			t.Errorf("dry run: %s: %v", s.sql, err)
		}
	}
}
