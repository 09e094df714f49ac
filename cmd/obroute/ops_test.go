package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// opsStore creates Shared hot and cold databases with monthly orders tables (December on
// cold; January with 30 rows, February and March on hot), their shard metadata on hot, and an
// obroute configuration file for them; the clock of the tests is 2025-03-15.
func opsStore(t *testing.T) (hot, cold *sqltest.Backend, cfg string) {
	t.Helper()
	bs := sqltest.Shared(t, "hot", "cold")
	hot, cold = bs[0], bs[1]
	if err := metadata.CreateTable(context.Background(), hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		month, on, last string
	}{{"202412", "cold", "2024-12-31"}, {"202501", "hot", "2025-01-31"}, {"202502", "hot", "2025-02-28"}, {"202503", "hot", "2025-03-31"}} {
		b := hot
		if m.on == "cold" {
			b = cold
		}
		b.Exec(t, "CREATE TABLE orders_"+m.month+" (id BIGINT PRIMARY KEY, order_time DATETIME NOT NULL, KEY (order_time))")
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, ?, ?)",
			"orders_"+m.month, m.month[:4]+"-"+m.month[4:]+"-01", m.last+" 23:59:59", m.on == "hot", m.on)
	}
	hot.Exec(t, "INSERT INTO orders_202501 SELECT seq, TIMESTAMP '2025-01-01 00:00:00' + INTERVAL seq - 1 DAY FROM seq_1_to_30")
	cfg = writeFile(t, "obroute.yaml", fmt.Sprintf(`backends:
  - {name: hot, role: hot, dsn: %q}
  - {name: cold, role: cold, dsn: %q}
time_tables:
  - {table: orders, shard_key: order_time, hot_window: {months: 1}}
metadata: {refresh: 1s}
`, hot.DSN, cold.DSN))
	return hot, cold, cfg
}

// stamp matches the time in front of a log line.
var stamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[0-9:.]+Z `)

// TestOperationsCommands: verify passes on a correct store and exits 1 on a fault; prepare
// creates the next month once; migrate prints its plan with -dry-run, moves the table with
// a log line per step off a terminal, and says so when run again; the daily mark-hot with the
// configuration prepares and marks.
func TestOperationsCommands(t *testing.T) {
	hot, cold, cfg := opsStore(t)
	now := "2025-03-15 12:00:00"

	code, out, errOut := cli(t, "metadata", "verify", "-config", cfg, "-now", now)
	if want := "verified 4 table(s): 0 fault(s), 0 warning(s); no row is hidden or counted twice\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("verify: exit %d, %q, %q; want 0, %q", code, out, errOut, want)
	}
	hot.Exec(t, "INSERT INTO orders_202502 (id, order_time) VALUES (99, '2025-03-02')")
	code, out, errOut = cli(t, "metadata", "verify", "-config", cfg, "-now", now)
	if code != 1 || !strings.HasPrefix(out, "FAULT orders_202502 on hot holds 1 row(s) up to 2025-03-02 00:00:00, past its max_time") ||
		errOut != "obroute metadata: faults found: 1 fault(s)\n" {
		t.Errorf("verify with a fault: exit %d, %q, %q", code, out, errOut)
	}
	hot.Exec(t, "DELETE FROM orders_202502 WHERE id = 99")

	code, out, errOut = cli(t, "metadata", "prepare", "-config", cfg, "-now", now)
	if want := "created orders_202504 on hot for 2025-04-01 00:00:00 … 2025-04-30 23:59:59\nprepare: 1 table(s) created; the period after 2025-03-15 has its table\n"; code != 0 || out != want {
		t.Errorf("prepare: exit %d, %q, %q; want 0, %q", code, out, errOut, want)
	}
	code, out, _ = cli(t, "metadata", "prepare", "-config", cfg, "-now", now)
	if want := "prepare: 0 table(s) created; the period after 2025-03-15 has its table\n"; code != 0 || out != want {
		t.Errorf("second prepare: exit %d, %q; want 0, %q", code, out, want)
	}

	code, out, errOut = cli(t, "migrate", "-config", cfg, "-now", now, "-dry-run", "orders_202501")
	if code != 0 || !strings.Contains(out, "move orders_202501 (orders, 2025-01-01 00:00:00 … 2025-01-31 23:59:59) from hot (") ||
		!strings.Contains(out, "9. drop   drop the emptied obroute_moved_orders_202501 on hot") || !strings.Contains(out, "state: a new move") {
		t.Errorf("migrate -dry-run: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	if n := rowCount(t, hot, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"); n != 0 {
		t.Errorf("the dry run created %d triggers", n)
	}
	code, out, errOut = cli(t, "migrate", "-config", cfg, "-now", now, "-chunk", "7", "-wait", "1s", "orders_202501")
	lines := stamp.ReplaceAllString(out, "")
	for _, says := range []string{"guard  make orders_202501 on hot read-only\nguard  done in ", "copy   copy orders_202501 from hot to cold\n",
		"copy   30/30 rows (100%), ", "wait   wait 1s for every obroute process", "delete 30/30 rows (100%)", "drop   done in ", "moved orders_202501 from hot to cold: 30 rows"} {
		if !strings.Contains(lines, says) {
			t.Errorf("migrate output does not say %q", says)
		}
	}
	if code != 0 || errOut != "" || strings.Count(out, "\n") != len(stamp.FindAllString(out, -1))+1 {
		t.Errorf("migrate: exit %d, stderr %q; want 0 and a time on every line but the last:\n%s", code, errOut, out)
	}
	if n := rowCount(t, cold, "SELECT COUNT(*) FROM orders_202501"); n != 30 {
		t.Errorf("cold holds %d rows of orders_202501, want 30", n)
	}
	code, out, _ = cli(t, "migrate", "-config", cfg, "-now", now, "orders_202501")
	if code != 0 || !strings.Contains(out, "moved orders_202501 from hot to cold: 30 rows") {
		t.Errorf("second migrate: exit %d, %q", code, out)
	}
	code, _, errOut = cli(t, "migrate", "-config", cfg, "-now", now, "orders_202503")
	if code != 1 || !strings.Contains(errOut, "orders_202503 is in the hot window of orders") {
		t.Errorf("migrate of a hot table: exit %d, %q", code, errOut)
	}

	code, out, errOut = cli(t, "metadata", "mark-hot", "-config", cfg, "-now", "2025-05-02")
	want := "created orders_202505 on hot for 2025-05-01 00:00:00 … 2025-05-31 23:59:59\ncreated orders_202506 on hot for 2025-06-01 00:00:00 … 2025-06-30 23:59:59\n" +
		"prepare: 2 table(s) created; the period after 2025-05-02 has its table\norders_202502 became cold\norders_202503 became cold\nmark-hot: 0 table(s) became hot, 2 became cold\n"
	if code != 0 || out != want {
		t.Errorf("mark-hot -config: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	// The daily migrate of the logical table: February and March have left the window.
	code, out, errOut = cli(t, "migrate", "-config", cfg, "-now", "2025-05-02", "-wait", "10ms", "orders")
	if code != 0 || !strings.HasPrefix(out, "2 table(s) of orders to move: orders_202502, orders_202503\n") ||
		!strings.Contains(out, "moved orders_202502 from hot to cold") || !strings.Contains(out, "moved orders_202503 from hot to cold") {
		t.Errorf("migrate orders: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	code, out, _ = cli(t, "migrate", "-config", cfg, "-now", "2025-05-02", "orders")
	if code != 0 || out != "0 table(s) of orders to move: \n" {
		t.Errorf("migrate orders with nothing due: exit %d, %q", code, out)
	}
	if code, out, _ := cli(t, "metadata", "verify", "-config", cfg, "-now", "2025-05-02"); code != 0 {
		t.Errorf("verify after the month's routine: exit %d\n%s", code, out)
	}
}

func rowCount(t *testing.T, b *sqltest.Backend, q string) int {
	t.Helper()
	var n int
	if err := b.DB.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
