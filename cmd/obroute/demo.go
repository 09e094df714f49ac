package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/embedded"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/rowscan"
	"github.com/obroute/obroute/metadata"
)

const demoUsage = `obroute demo: run the showcase on embedded backends (no database server needed)

Starts four in-process MySQL-protocol backends (hot, cold, shadow_hot, shadow_cold),
loads a time-sharded orders data set (six monthly tables: the three of the hot window
on hot, the older three on cold, described in shard_metadata), and runs showcase
statements through one obroute handle, printing where each one went.

Usage:
  obroute demo [-v]

Flags:
  -v    also print obroute's debug log of every route decision

Example:
  go run ./cmd/obroute demo
`

func runDemo(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("demo", demoUsage, stdout)
	verbose := fs.Bool("v", false, "print every route decision")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d := &demo{out: stdout, now: time.Now().UTC()}
	defer d.close()
	if err := d.start(*verbose); err != nil {
		return err
	}
	return d.showcase(ctx)
}

// demo holds the embedded backends and the obroute handle over them.
type demo struct {
	out      io.Writer
	now      time.Time
	servers  map[string]*embedded.Server
	conn     *connector.Connector
	db       *sql.DB
	months   []time.Time // first day of each monthly table, oldest first
	hotFirst time.Time   // first month of the hot window
}

func (d *demo) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

func (d *demo) close() {
	if d.db != nil {
		d.db.Close()
	}
	for _, s := range d.servers {
		s.Close()
	}
}

func (d *demo) start(verbose bool) error {
	d.servers = map[string]*embedded.Server{}
	for _, name := range []string{"hot", "cold", "shadow_hot", "shadow_cold"} {
		s, err := embedded.Start(embedded.Options{Name: name, Databases: []string{"shop"}})
		if err != nil {
			return err
		}
		d.servers[name] = s
	}
	d.printf("== Backends (embedded go-mysql-server, in this process)\n")
	for _, name := range []string{"hot", "cold", "shadow_hot", "shadow_cold"} {
		d.printf("   %-12s %s\n", name, d.servers[name].Addr())
	}
	if err := d.load(); err != nil {
		return err
	}
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: d.servers["hot"].DSN("shop")},
			{Name: "cold", Role: "cold", DSN: d.servers["cold"].DSN("shop")},
			{Name: "shadow_hot", Role: "shadow", DSN: d.servers["shadow_hot"].DSN("shop")},
			{Name: "shadow_cold", Role: "shadow", DSN: d.servers["shadow_cold"].DSN("shop")},
		},
		Routes: map[string]string{"audit_log": "cold"},
		Shadow: demoShadowRule(),
		TimeTables: []config.TimeTable{{
			Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2},
		}},
	}
	var opts []connector.Option
	if verbose {
		opts = append(opts, connector.WithLogger(slog.New(slog.NewTextHandler(d.out, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	c, err := connector.New(cfg, opts...)
	if err != nil {
		return err
	}
	d.conn = c
	d.db = sql.OpenDB(c)
	return nil
}

// load creates the monthly orders tables, their rows and shard_metadata on production and shadow
// backends alike.
func (d *demo) load() error {
	first := time.Date(d.now.Year(), d.now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for i := 5; i >= 0; i-- {
		d.months = append(d.months, first.AddDate(0, -i, 0))
	}
	d.hotFirst = metadata.HotWindow{Months: 2}.Boundary(d.now)
	var meta []string
	for _, pair := range [][2]string{{"hot", "cold"}, {"shadow_hot", "shadow_cold"}} {
		hot, cold := d.admin(pair[0]), d.admin(pair[1])
		defer hot.Close()
		defer cold.Close()
		for _, db := range []*sql.DB{hot, cold} {
			if _, err := db.Exec("CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))"); err != nil {
				return err
			}
		}
		if err := metadata.CreateTable(context.Background(), hot, ""); err != nil {
			return err
		}
		meta = meta[:0]
		for m, month := range d.months {
			name := "orders_" + month.Format("200601")
			isHot := !month.Before(d.hotFirst)
			db := cold
			if isHot {
				db = hot
			}
			if _, err := db.Exec("CREATE TABLE " + name + " (id BIGINT PRIMARY KEY, user_id INT NOT NULL, amount DECIMAL(10,2) NOT NULL, order_time DATETIME NOT NULL)"); err != nil {
				return err
			}
			var rows []string
			// Cents in quarters: go-mysql-server sums DECIMAL as DOUBLE, and quarters add up
			// exactly in binary floating point (MariaDB sums them as exact DECIMAL anyway).
			for i := 0; i < 20; i++ {
				at := month.Add(time.Duration(i) * 36 * time.Hour)
				rows = append(rows, fmt.Sprintf("(%d, %d, %d.%02d, '%s')", m*100+i, i%4+1, 10+i*m, (i%4)*25, at.Format(time.DateTime)))
			}
			if _, err := db.Exec("INSERT INTO " + name + " VALUES " + strings.Join(rows, ", ")); err != nil {
				return err
			}
			last := month.Add(19 * 36 * time.Hour)
			hotFlag := 0
			if isHot {
				hotFlag = 1
			}
			if _, err := hot.Exec("INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
				name, month.Format(time.DateTime), last.Format(time.DateTime), hotFlag); err != nil {
				return err
			}
			meta = append(meta, fmt.Sprintf("%s(%s)", name, map[bool]string{true: "hot", false: "cold"}[isHot]))
		}
	}
	d.printf("== Data: orders sharded by month, hot window = current month + 2 before (from %s)\n   %s\n\n",
		d.hotFirst.Format(time.DateOnly), strings.Join(meta, " "))
	return nil
}

func (d *demo) admin(name string) *sql.DB {
	db, _ := sql.Open("mysql", d.servers[name].DSN("shop"))
	return db
}

func demoShadowRule() *config.Shadow {
	return &config.Shadow{
		Mappings:         []config.ShadowMapping{{Production: "hot", Shadow: "shadow_hot"}, {Production: "cold", Shadow: "shadow_cold"}},
		Algorithms:       []config.ShadowAlgorithm{{Name: "by-hint", Kind: "hint"}},
		DefaultAlgorithm: "by-hint",
	}
}

// showcase runs the demo statements.
func (d *demo) showcase(ctx context.Context) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	hotFrom := d.hotFirst.AddDate(0, 0, 3)
	coldFrom := d.months[1]

	d.section("1. Session state follows the client session to every backend")
	d.exec(ctx, conn, "SET time_zone = '+08:00'")
	d.query(ctx, conn, "SELECT @@time_zone AS tz, COUNT(*) AS n FROM audit_log")

	d.section("2. A transaction is pinned to the backend of its first statement")
	d.exec(ctx, conn, "BEGIN")
	d.exec(ctx, conn, "INSERT INTO audit_log VALUES (1, 'first statement: routes to cold')")
	d.query(ctx, conn, "SELECT COUNT(*) AS audit_rows_here FROM audit_log")
	d.explain(ctx, conn, "SELECT COUNT(*) FROM audit_log")
	d.exec(ctx, conn, "COMMIT")

	d.section("3. A range inside the hot window touches only the hot store")
	hotOnly := fmt.Sprintf("SELECT user_id, SUM(amount) AS total FROM orders WHERE order_time >= '%s' GROUP BY user_id ORDER BY user_id", day(hotFrom))
	d.explain(ctx, conn, hotOnly)
	d.query(ctx, conn, hotOnly)

	d.section("4. A range across the boundary is split into hot and cold sub-queries, merged client-side")
	split := fmt.Sprintf("SELECT user_id, COUNT(*) AS n, SUM(amount) AS total, AVG(amount) AS avg FROM orders WHERE order_time >= '%s' GROUP BY user_id ORDER BY total DESC LIMIT 3", day(coldFrom))
	d.explain(ctx, conn, split)
	d.query(ctx, conn, split)

	d.section("5. Query level L1 (hot only) on a range that reaches cold data is refused, never downgraded")
	d.query(hint.WithLevel(ctx, hint.L1), conn, fmt.Sprintf("SELECT COUNT(*) FROM orders WHERE order_time >= '%s'", day(coldFrom)))
	d.query(ctx, conn, "SELECT COUNT(*) FROM orders WHERE DATE(order_time) = '2025-03-15'")

	d.section("6. Shadow traffic goes to the shadow backends, never to production")
	shadowCtx := hint.WithShadow(ctx)
	d.exec(shadowCtx, conn, "INSERT INTO audit_log VALUES (99, 'load test')")
	d.query(shadowCtx, conn, "SELECT COUNT(*) AS shadow_audit_rows FROM audit_log")
	d.query(ctx, conn, "/* SHARDINGSPHERE_HINT: SHADOW=true */ SELECT COUNT(*) AS shadow_again FROM audit_log WHERE id = 99")
	d.query(ctx, conn, "SELECT COUNT(*) AS production_rows_99 FROM audit_log WHERE id = 99")

	d.section("7. Stats")
	s := d.conn.Stats()
	d.printf("   routes by class: %v\n   refused: %d, server sessions opened: %d, parse cache hit rate: %.0f%%\n",
		s.Routes, s.Rejected, s.ServerSessionsOpened, 100*s.ParseCache.HitRate())
	return nil
}

func (d *demo) section(title string) { d.printf("\n== %s\n", title) }

type querier interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func (d *demo) exec(ctx context.Context, q querier, query string) {
	d.printf("%s%s\n", d.hintPrefix(ctx), query)
	if _, err := q.ExecContext(ctx, query); err != nil {
		d.printf("   ! %v\n", err)
	}
}

func (d *demo) hintPrefix(ctx context.Context) string {
	if h := hint.FromContext(ctx); !h.IsZero() {
		return fmt.Sprintf("[ctx %s] ", h)
	}
	return ""
}

func (d *demo) query(ctx context.Context, q querier, query string) {
	d.printf("%s%s\n", d.hintPrefix(ctx), query)
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		d.printf("   ! %v\n", err)
		return
	}
	cols, _ := rows.Columns()
	d.printf("   | %s\n", strings.Join(cols, " | "))
	d.eachRow(rows, func(cells []string) { d.printf("   | %s\n", strings.Join(cells, " | ")) })
}

// eachRow calls f with the text of each row's cells ("NULL" for NULL) and closes rows.
func (d *demo) eachRow(rows *sql.Rows, f func(cells []string)) {
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.NullString, len(cols))
	ptrs := rowscan.Targets(vals)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			d.printf("   ! %v\n", err)
			return
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = v.String
			if !v.Valid {
				cells[i] = "NULL"
			}
		}
		f(cells)
	}
	if err := rows.Err(); err != nil {
		d.printf("   ! %v\n", err)
	}
}

func (d *demo) explain(ctx context.Context, q querier, query string) {
	rows, err := q.QueryContext(ctx, "EXPLAIN ROUTE "+query)
	if err != nil {
		d.printf("   ! EXPLAIN ROUTE: %v\n", err)
		return
	}
	d.printf("   EXPLAIN ROUTE:\n")
	d.eachRow(rows, func(cells []string) {
		kept := cells[:0]
		for _, c := range cells {
			if c != "" && c != "NULL" {
				kept = append(kept, c)
			}
		}
		d.printf("     %s\n", strings.Join(kept, "  "))
	})
}
