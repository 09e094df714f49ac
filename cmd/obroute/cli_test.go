package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obroute/obroute/embedded"
)

// cli runs the command line and returns its exit code and outputs.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

const secret = "Cli-Pw-51b0e9"

// backends starts embedded hot and cold servers that accept only app/secret, with the monthly
// orders tables and a shard_metadata table on hot; it returns their DSNs and addresses.
func backends(t *testing.T) (dsn, addr map[string]string) {
	t.Helper()
	dsn, addr = map[string]string{}, map[string]string{}
	for _, name := range []string{"hot", "cold"} {
		srv, err := embedded.Start(embedded.Options{Name: name, User: "app", Password: secret, Databases: []string{"shop"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		dsn[name], addr[name] = srv.DSN("shop"), srv.Addr()
	}
	db, err := sql.Open("mysql", dsn["hot"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE shard_metadata (table_name VARCHAR(64) PRIMARY KEY, min_time DATETIME NOT NULL, max_time DATETIME NOT NULL, is_hot TINYINT NOT NULL DEFAULT 0, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
		"INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES " +
			"('orders_202411', '2024-11-01 00:00:00', '2024-11-30 23:59:59', 1), " + // stale: becomes cold
			"('orders_202412', '2024-12-01 00:00:00', '2024-12-31 23:59:59', 0), " +
			"('orders_202501', '2025-01-01 00:00:00', '2025-01-31 23:59:59', 0), " + // becomes hot
			"('orders_202502', '2025-02-01 00:00:00', '2025-02-28 23:59:59', 1), " +
			"('orders_202503', '2025-03-01 00:00:00', '2025-03-31 23:59:59', 1)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return dsn, addr
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func configFile(t *testing.T, dsn map[string]string) string {
	return writeFile(t, "obroute.yaml", fmt.Sprintf(`backends:
  - name: hot
    role: hot
    dsn: %q
  - name: cold
    role: cold
    dsn: %q
routes:
  audit_log: cold
time_tables:
  - table: orders
    shard_key: order_time
    shard_key_type: datetime
    hot_window:
      months: 2
`, dsn["hot"], dsn["cold"]))
}

const metadataCSV = `table_name,min_time,max_time,is_hot
orders_202412,2024-12-01,2024-12-31 23:59:59,0
orders_202501,2025-01-01,2025-01-31 23:59:59,1
orders_202502,2025-02-01,2025-02-28 23:59:59,1
orders_202503,2025-03-01,2025-03-31 23:59:59,1
`

const metadataYAML = `- {table_name: orders_202412, min_time: "2024-12-01", max_time: "2024-12-31 23:59:59", is_hot: false}
- {table_name: orders_202501, min_time: "2025-01-01", max_time: "2025-01-31 23:59:59", is_hot: true}
- {table_name: orders_202502, min_time: "2025-02-01", max_time: "2025-02-28 23:59:59", is_hot: true}
- {table_name: orders_202503, min_time: "2025-03-01", max_time: "2025-03-31 23:59:59", is_hot: true}
`

func TestExplainCommand(t *testing.T) {
	dsn, addr := backends(t)
	cfg := configFile(t, dsn)
	csvFile := writeFile(t, "shards.csv", metadataCSV)
	yamlFile := writeFile(t, "shards.yaml", metadataYAML)
	obDSN := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold;time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2", dsn["hot"], dsn["cold"])

	staticRoute := fmt.Sprintf(`Route Prompts
  [INFO] Will route to backend cold by the route of table audit_log
Route Plan
  > SQL_PARSE:{cmd:"COM_QUERY", kind:"SELECT", tables:"audit_log", params:1}
  > HINTS:{hints:"none"}
  > ROUTE_INFO:{route_info_type:"USE_ROUTE_POLICY", class:"default", backend:"cold", addr:%q, in_transaction:false, shadow:false, query_level:"none"}
  > SUB_QUERY:{index:1, backend:"cold", addr:%q, cold:false, sql:"SELECT note FROM audit_log WHERE id = ?", args:["7"]}
`, addr["cold"], addr["cold"])
	cases := []struct {
		name string
		args []string
		code int
		// want is the whole stdout, or, with prefix set, its start.
		want   string
		prefix bool
		stderr string
	}{
		{name: "static route, YAML config, CSV metadata", code: 0, want: staticRoute,
			args: []string{"explain", "-config", cfg, "-metadata", csvFile, "-now", "2025-03-15", "-arg", "7", "SELECT note FROM audit_log WHERE id = ?"}},
		{name: "static route, DSN, YAML metadata", code: 0, want: staticRoute,
			args: []string{"explain", "-dsn", obDSN, "-metadata", yamlFile, "-now", "2025-03-15", "-arg", "7", "SELECT note FROM audit_log WHERE id = ?"}},
		{name: "hot only, metadata from the live backend", code: 0, prefix: true,
			args: []string{"explain", "-config", cfg, "-now", "2025-03-15 08:00:00", "/*+ OBROUTE(query_level=L1) */ SELECT id FROM orders WHERE order_time >= '2025-02-10'"},
			want: fmt.Sprintf(`Route Prompts
  [INFO] range [2025-02-10 00:00:00, +inf) on order_time: 2 hot table(s), level L1
  [INFO] did not touch the history store
Route Plan
  > SQL_PARSE:{cmd:"COM_QUERY", kind:"SELECT", tables:"orders"}
  > HINTS:{hints:"query_level=L1"}
  > ROUTE_INFO:{route_info_type:"USE_PARTITION_LOCATION_LOOKUP", class:"hot_only", backend:"hot", addr:%q, in_transaction:false, shadow:false, query_level:"L1"}
  > SUB_QUERY:{index:1, backend:"hot", addr:%q, cold:false, tables:"orders_202502,orders_202503", sql:`, addr["hot"], addr["hot"])},
		{name: "split", code: 0, prefix: true,
			args: []string{"explain", "-config", cfg, "-metadata", csvFile, "-now", "2025-03-15", "EXPLAIN ROUTE SELECT id FROM orders WHERE order_time >= '2024-12-20' ORDER BY id LIMIT 5"},
			want: `Route Prompts
  [INFO] range [2024-12-20 00:00:00, +inf) on order_time: crosses the hot window boundary 2025-01-01 00:00:00: split into `},
		{name: "refused", code: 1, prefix: true, stderr: "obroute explain: the statement would be refused (level_violation)\n",
			args: []string{"explain", "-config", cfg, "-metadata", csvFile, "-now", "2025-03-15", "/*+ OBROUTE(query_level=L1) */ SELECT id FROM orders WHERE order_time >= '2024-12-20'"},
			want: "Route Prompts\n  [ERROR] Will not route: obroute: query level violated"},
		{name: "no configuration", code: 1, stderr: "obroute explain: no configuration: give -config obroute.yaml or -dsn 'obroute:backends.hot.dsn=…'\n",
			args: []string{"explain", "SELECT 1"}},
		{name: "no statement", code: 1, stderr: "obroute explain: give exactly one SQL statement (quoted), got 0 arguments; see obroute help explain\n",
			args: []string{"explain", "-config", cfg}},
		{name: "bad -now", code: 1, stderr: "obroute explain: -now \"yesterday\": write it 2025-03-15, \"2025-03-15 12:00:00\" (UTC) or 2025-03-15T12:00:00+08:00\n",
			args: []string{"explain", "-config", cfg, "-metadata", csvFile, "-now", "yesterday", "SELECT 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cli(t, c.args...)
			if code != c.code || errOut != c.stderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, c.code, c.stderr)
			}
			if c.prefix && !strings.HasPrefix(out, c.want) || !c.prefix && out != c.want {
				t.Errorf("stdout:\n%s\nwant (prefix=%v):\n%s", out, c.prefix, c.want)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the backend password appears in the output")
			}
		})
	}
}

func TestMarkHotCommand(t *testing.T) {
	dsn, _ := backends(t)
	code, out, errOut := cli(t, "metadata", "mark-hot", "-dsn", dsn["hot"], "-hot-months", "2", "-now", "2025-03-15")
	want := "hot window current month + 2 previous from 2025-01-01 00:00:00: 1 table(s) became hot, 1 became cold; now 3 hot, 2 cold\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, %q", code, out, errOut, want)
	}
	db, err := sql.Open("mysql", dsn["hot"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT table_name, is_hot FROM shard_metadata ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		var hot int
		if err := rows.Scan(&name, &hot); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s=%d", name, hot))
	}
	if g, w := strings.Join(got, " "), "orders_202411=0 orders_202412=0 orders_202501=1 orders_202502=1 orders_202503=1"; g != w {
		t.Errorf("is_hot: %s, want %s", g, w)
	}
	// Run again: nothing changes.
	code, out, _ = cli(t, "metadata", "mark-hot", "-dsn", dsn["hot"], "-hot-months", "2", "-now", "2025-03-15")
	if want := "hot window current month + 2 previous from 2025-01-01 00:00:00: 0 table(s) became hot, 0 became cold; now 3 hot, 2 cold\n"; code != 0 || out != want {
		t.Errorf("second run: exit %d, %q; want 0, %q", code, out, want)
	}
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"metadata", "mark-hot", "-hot-days", "7"}, "obroute metadata: no -dsn: give the go-sql-driver DSN of the backend holding the metadata table\n"},
		{[]string{"metadata", "mark-hot", "-dsn", dsn["hot"]}, "obroute metadata: metadata: invalid hot window: neither days nor months is set; set exactly one (e.g. days=90 or months=2) (flags -hot-days and -hot-months)\n"},
		{[]string{"metadata", "mark-cold"}, "obroute metadata: unknown command \"mark-cold\": the metadata commands are: verify, prepare, mark-hot\n"},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != 1 || errOut != c.stderr {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", c.args, code, errOut, c.stderr)
		}
		if strings.Contains(errOut, secret) {
			t.Errorf("%v: the password appears in stderr", c.args)
		}
	}
}

// TestHelp: the main help lists every command with what it does; every command's help says what
// it does, its usage and an example, through each way of asking.
func TestHelp(t *testing.T) {
	code, out, _ := cli(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range []string{
		"demo       run the showcase on embedded hot, cold and shadow backends",
		"explain    print the route plan of a statement without running it",
		"check      how a workload (general or slow log, statements, digests) would route, before switching",
		"metadata   shard metadata jobs: verify against the data, prepare the coming tables, mark-hot",
		"migrate    move a table that left the hot window from hot to cold, resumably",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not say %q:\n%s", want, out)
		}
	}
	cases := []struct {
		command string
		asks    [][]string
		says    []string
	}{
		{"demo", [][]string{{"help", "demo"}, {"demo", "-h"}}, []string{"obroute demo: run the showcase", "Usage:", "Example:\n  go run ./cmd/obroute demo"}},
		{"explain", [][]string{{"help", "explain"}, {"explain", "-h"}, {"explain", "--help"}}, []string{"obroute explain: print the route plan of a statement without running it", "Usage:", "Example:\n  obroute explain -config obroute.yaml"}},
		{"check", [][]string{{"help", "check"}, {"check", "-h"}}, []string{"obroute check: how a workload would route through obroute", "Usage:", "Examples:\n  obroute check -config obroute.yaml /var/lib/mysql/general.log"}},
		{"metadata", [][]string{{"help", "metadata"}, {"metadata", "--help"}, {"metadata", "mark-hot", "-h"}}, []string{"obroute metadata: shard metadata jobs", "mark-hot   the daily job of the hot window", "verify     compare shard_metadata with the data", "prepare    create the physical tables of the coming periods", "Usage:", "Examples:\n  obroute metadata verify -config"}},
		{"migrate", [][]string{{"help", "migrate"}, {"migrate", "-h"}}, []string{"obroute migrate: move a table that left the hot window", "Usage:", "Example:\n  obroute migrate -config /etc/obroute.yaml -dry-run orders_202501"}},
	}
	for _, c := range cases {
		for _, args := range c.asks {
			code, out, errOut := cli(t, args...)
			if code != 0 || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, errOut)
			}
			for _, want := range c.says {
				if !strings.Contains(out, want) {
					t.Errorf("%v does not say %q:\n%s", args, want, out)
				}
			}
		}
	}
}
