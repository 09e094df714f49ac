package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/rowscan"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// keyCluster is a logical table orders split by the shard key ts over hot and cold, and a
// reference database holding all its rows in one table orders: what obroute answers is
// compared with what one server answers, in the same session settings.
type keyCluster struct {
	hot, cold, ref *sqltest.Backend
	tables         []metadata.Table
}

// newKeyCluster creates orders (id, ts <colType>, KEY(ts)) as each of tables on hot (is_hot) or
// cold and as one table on ref, with the rows at the UTC times given (inserted in UTC
// sessions), and the shard metadata on hot.
func newKeyCluster(t *testing.T, bs []*sqltest.Backend, colType string, tables []metadata.Table, times []time.Time) *keyCluster {
	t.Helper()
	c := &keyCluster{hot: bs[0], cold: bs[1], ref: bs[2], tables: tables}
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, c.hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	create := "CREATE TABLE %s (id INT PRIMARY KEY, ts " + colType + " NULL, KEY (ts))"
	insert := func(b *sqltest.Backend, table string, rows []string) {
		conn, err := b.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range append([]string{"SET time_zone = '+00:00'", fmt.Sprintf(create, table)}, rows...) {
			if _, err := conn.ExecContext(ctx, strings.ReplaceAll(q, "%T", table)); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	values := func(pick func(time.Time) bool) []string {
		var vs []string
		for i, tm := range times {
			if pick(tm) {
				vs = append(vs, fmt.Sprintf("(%d, '%s')", i+1, tm.Format("2006-01-02 15:04:05.999999")))
			}
		}
		if len(vs) == 0 {
			return nil
		}
		return []string{"INSERT INTO %T VALUES " + strings.Join(vs, ", ")}
	}
	insert(c.ref, "orders", values(func(time.Time) bool { return true }))
	for _, tb := range tables {
		b := c.cold
		if tb.Hot {
			b = c.hot
		}
		end := tb.Max.Add(time.Second)
		insert(b, tb.Name, values(func(tm time.Time) bool { return !tm.Before(tb.Min) && tm.Before(end) }))
		c.hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	return c
}

// open opens obroute over hot and cold (each DSN with params added) and the reference (ref's
// DSN with the same params), with the clock at now.
func (c *keyCluster) open(t *testing.T, params string, now time.Time) (ob, ref *sql.DB) {
	t.Helper()
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: c.hot.DSN + params},
			{Name: "cold", Role: "cold", DSN: c.cold.DSN + params},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "ts", HotWindow: config.HotWindow{Months: 2}}},
		Metadata:   config.Metadata{Backend: "hot"},
	}
	conn, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ob = sql.OpenDB(conn)
	t.Cleanup(func() { ob.Close() })
	ref, err = sql.Open("mysql", c.ref.DSN+params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	return ob, ref
}

// sessions returns one session of ob and one of ref, each set up by the statements given.
func sessions(t *testing.T, ob, ref *sql.DB, setup ...string) (*sql.Conn, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	var out [2]*sql.Conn
	for i, db := range []*sql.DB{ob, ref} {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		for _, s := range setup {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		out[i] = conn
	}
	return out[0], out[1]
}

// zoneRows runs q on conn and returns its rows as text, or the error.
func zoneRows(conn *sql.Conn, q string, args ...any) (string, error) {
	rows, err := conn.QueryContext(context.Background(), q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		if err := rows.Scan(rowscan.Targets(vals)...); err != nil {
			return "", err
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			switch x := v.(type) {
			case nil:
				b.WriteString("NULL")
			case []byte:
				b.Write(x)
			case time.Time:
				b.WriteString(x.Format("2006-01-02 15:04:05.999999"))
			default:
				fmt.Fprint(&b, x)
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}

// same checks that q answers on ob's session as on ref's.
func same(t *testing.T, ob, ref *sql.Conn, q string, args ...any) {
	t.Helper()
	want, err := zoneRows(ref, q, args...)
	if err != nil {
		t.Fatalf("reference: %s: %v", q, err)
	}
	got, err := zoneRows(ob, q, args...)
	if err != nil {
		t.Errorf("obroute: %s %v: %v", q, args, err)
		return
	}
	if got != want {
		t.Errorf("%s %v:\nobroute:\n%s\none server:\n%s", q, args, got, want)
	}
}

// hourly returns the instants every hour in [from, to).
func hourly(from, to time.Time) []time.Time {
	var out []time.Time
	for tm := from; tm.Before(to); tm = tm.Add(time.Hour) {
		out = append(out, tm)
	}
	return out
}

// monthsUTC returns orders_YYYYMM tables of UTC months from first to last, hot from hotFrom.
func monthsUTC(first, last, hotFrom time.Time) []metadata.Table {
	var out []metadata.Table
	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		out = append(out, metadata.Table{Name: "orders_" + m.Format("200601"), Min: m, Max: m.AddDate(0, 1, 0).Add(-time.Second), Hot: !m.Before(hotFrom)})
	}
	return out
}

func utc(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }

// TestTimestampKeyInSessionZones: a TIMESTAMP shard key is read, and each table's clamp written,
// in the session's time zone, however it is set — SET time_zone, the backends' DSN time_zone
// parameter — and time.Time arguments in go-sql-driver's loc; an INSERT goes to the table of
// the UTC instant the server stores. Before, the range and the clamps were read as UTC, and
// a +09:00 session lost the rows of the nine hours before each boundary.
func TestTimestampKeyInSessionZones(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	c := newKeyCluster(t, bs, "TIMESTAMP", monthsUTC(utc(2026, 9, 1, 0), utc(2026, 11, 1, 0), utc(2026, 10, 1, 0)),
		hourly(utc(2026, 9, 28, 0), utc(2026, 11, 3, 0)))
	now := utc(2026, 11, 15, 12)
	queries := []struct {
		sql  string
		args []any
	}{
		{"SELECT COUNT(*) FROM orders WHERE ts >= '2026-11-01 00:00:00' AND ts < '2026-11-01 09:00:00'", nil},
		{"SELECT COUNT(*), MIN(ts), MAX(ts) FROM orders WHERE ts >= '2026-09-30 18:00:00' AND ts < '2026-10-01 12:00:00'", nil},
		{"SELECT id, ts FROM orders WHERE ts BETWEEN '2026-10-31 16:00:00' AND '2026-11-01 10:00:00' ORDER BY ts", nil},
		{"SELECT COUNT(*) FROM orders WHERE ts >= ? AND ts < ?", []any{"2026-10-31 20:00:00", "2026-11-01 06:00:00"}},
		{"SELECT id FROM orders WHERE ts IN ('2026-10-01 03:00:00', '2026-11-01 04:30:00', '2026-10-01 05:30:00') ORDER BY id", nil},
		{"SELECT MAX(ts) FROM orders WHERE ts < '2026-10-01 08:00:00'", nil},
	}
	run := func(t *testing.T, ob, ref *sql.Conn) {
		for _, q := range queries {
			same(t, ob, ref, q.sql, q.args...)
		}
	}
	ob, ref := c.open(t, "", now)
	for _, zone := range []string{"+09:00", "-05:00", "+05:30", "+00:00"} {
		t.Run("SET time_zone "+zone, func(t *testing.T) {
			o, r := sessions(t, ob, ref, "SET time_zone = '"+zone+"'")
			run(t, o, r)
		})
	}
	t.Run("DSN time_zone", func(t *testing.T) {
		ob, ref := c.open(t, "&time_zone="+url.QueryEscape("'+09:00'"), now)
		o, r := sessions(t, ob, ref)
		run(t, o, r)
	})
	t.Run("loc and time.Time arguments", func(t *testing.T) {
		// go-sql-driver sends a time.Time as its wall clock in loc, which the server reads in the
		// session's zone: here Tokyo's wall clock in a UTC session.
		ob, ref := c.open(t, "&loc=Asia%2FTokyo", now)
		o, r := sessions(t, ob, ref)
		tokyo, err := time.LoadLocation("Asia/Tokyo")
		if err != nil {
			t.Fatal(err)
		}
		same(t, o, r, "SELECT COUNT(*), MIN(ts), MAX(ts) FROM orders WHERE ts >= ? AND ts < ?", utc(2026, 10, 31, 15).In(tokyo), utc(2026, 11, 1, 12))
		same(t, o, r, "SELECT id FROM orders WHERE ts = ?", time.Date(2026, 11, 1, 3, 0, 0, 0, tokyo))
	})
	t.Run("INSERT at +09:00", func(t *testing.T) {
		o, _ := sessions(t, ob, ref, "SET time_zone = '+09:00'")
		if _, err := o.ExecContext(context.Background(), "INSERT INTO orders (id, ts) VALUES (100001, '2026-11-01 05:00:00')"); err != nil {
			t.Fatal(err)
		}
		conn, err := c.hot.DB.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), "SET time_zone = '+00:00'"); err != nil {
			t.Fatal(err)
		}
		got, err := zoneRows(conn, "SELECT 'orders_202610', CAST(ts AS CHAR) FROM orders_202610 WHERE id = 100001 UNION ALL SELECT 'orders_202611', CAST(ts AS CHAR) FROM orders_202611 WHERE id = 100001")
		if err != nil || got != "orders_202610 | 2026-10-31 20:00:00\n" {
			t.Errorf("the row inserted at '2026-11-01 05:00:00' +09:00 is in %q (%v); want orders_202610 at 2026-10-31 20:00:00 UTC", got, err)
		}
	})
}

// TestDateKeyClampsAreDates: a DATE shard key is clamped with DATE literals. A table whose
// max_time is the midnight of its last day was clamped with d < 'YYYY-MM-DD 00:00:01', and
// MariaDB's MIN/MAX optimisation of an indexed DATE column compared with a DATETIME that has a
// time part returns a wrong MAX or MIN (10.11: MAX(d) the day before the last).
func TestDateKeyClampsAreDates(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	day := func(m time.Month, d int) time.Time { return utc(2026, m, d, 0) }
	tables := []metadata.Table{
		{Name: "orders_202609", Min: day(9, 1), Max: day(9, 30)},
		{Name: "orders_202610", Min: day(10, 1), Max: day(10, 31), Hot: true},
		{Name: "orders_202611", Min: day(11, 1), Max: day(11, 30), Hot: true},
	}
	var days []time.Time
	for d := day(9, 1); d.Before(day(12, 1)); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	c := newKeyCluster(t, bs, "DATE", tables, days)
	ob, ref := c.open(t, "", utc(2026, 11, 15, 12))
	o, r := sessions(t, ob, ref)
	for _, q := range []string{
		"SELECT MIN(ts), MAX(ts), COUNT(*) FROM orders WHERE ts >= '2026-09-15' AND ts < '2026-11-15'",
		"SELECT MAX(ts) FROM orders WHERE ts BETWEEN '2026-09-20' AND '2026-10-31'",
		"SELECT MIN(ts) FROM orders WHERE ts > '2026-09-30' AND ts <= '2026-11-01'",
		"SELECT COUNT(*), MAX(ts) FROM orders WHERE ts >= DATE '2026-10-01' AND ts <= DATE '2026-10-31'",
		"SELECT ts FROM orders WHERE ts >= '2026-09-29' AND ts < '2026-10-03' ORDER BY ts",
		"SELECT MAX(ts) FROM orders WHERE ts >= '2026-09-15' AND ts < '2026-10-01'",
		"SELECT MIN(ts) FROM orders WHERE ts > '2026-09-29' AND ts < '2026-10-05'",
		"SELECT MAX(ts), MIN(ts) FROM orders WHERE ts >= '2026-10-20' AND ts < '2026-11-01'",
	} {
		same(t, o, r, q)
	}
}

// TestTimestampKeyAcrossDaylightSaving: in a Europe/Berlin session (on servers with the zone
// database) a TIMESTAMP key around the autumn change, with daily tables whose boundary of
// 2026-10-25 00:00 UTC is 02:00 CEST, a wall clock the change repeats. obroute answers as one
// server where one server has one answer and refuses, saying how to rewrite, where it has not.
func TestTimestampKeyAcrossDaylightSaving(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "hot", "cold", "ref")
	var tables []metadata.Table
	for d := utc(2026, 10, 22, 0); d.Before(utc(2026, 10, 28, 0)); d = d.AddDate(0, 0, 1) {
		tables = append(tables, metadata.Table{Name: "orders_" + d.Format("20060102"), Min: d, Max: d.AddDate(0, 0, 1).Add(-time.Second), Hot: !d.Before(utc(2026, 10, 25, 0))})
	}
	var times []time.Time
	for tm := utc(2026, 10, 22, 0); tm.Before(utc(2026, 10, 28, 0)); tm = tm.Add(10 * time.Minute) {
		times = append(times, tm)
	}
	c := newKeyCluster(t, bs, "TIMESTAMP(0)", tables, times)
	ob, ref := c.open(t, "", utc(2026, 10, 27, 12))
	o, r := sessions(t, ob, ref, "SET time_zone = 'Europe/Berlin'")
	for _, q := range []string{
		"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00'",
		"SELECT COUNT(*), MIN(ts), MAX(ts) FROM orders WHERE ts >= '2026-10-25 02:30:00' AND ts < '2026-10-25 04:00:00'",
		"SELECT COUNT(*) FROM orders WHERE ts > '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00' AND ts <> '2026-10-25 02:30:00'",
		"SELECT id, ts FROM orders WHERE ts >= '2026-10-25 01:00:00' AND ts < '2026-10-25 03:00:00' ORDER BY id",
		"SELECT DATE(ts), COUNT(*) FROM orders WHERE ts >= '2026-10-23' AND ts < '2026-10-27' GROUP BY DATE(ts) ORDER BY 1",
	} {
		same(t, o, r, q)
	}
	for _, q := range []struct {
		sql  string
		want error
	}{
		{"SELECT COUNT(*) FROM orders WHERE ts >= '2026-10-25 01:00:00' AND ts < '2026-10-25 02:30:00'", connector.ErrTimeZone},
		{"SELECT id FROM orders WHERE ts = '2026-10-25 02:10:00'", connector.ErrTimeZone},
		{"SELECT ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' ORDER BY ts", connector.ErrNotMergeable},
		{"SELECT MAX(ts) FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00'", connector.ErrNotMergeable},
	} {
		if _, err := zoneRows(o, q.sql); !errors.Is(err, q.want) || !strings.Contains(err.Error(), "SET time_zone to an offset") {
			t.Errorf("%s: %v, want %v saying how to rewrite", q.sql, err, q.want)
		}
	}
	// In an offset zone the same statements are answered.
	o, r = sessions(t, ob, ref, "SET time_zone = '+01:00'")
	same(t, o, r, "SELECT ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' ORDER BY ts")
	same(t, o, r, "SELECT id FROM orders WHERE ts = '2026-10-25 02:10:00'")
}
