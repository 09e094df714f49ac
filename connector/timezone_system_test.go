package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestTimestampKeyInSystemZoneWithDaylightSaving: servers whose time_zone is SYSTEM and whose
// system zone is Europe/London, which is GMT (offset 0) in winter, when the test runs, and BST
// in summer. obroute read SYSTEM as UTC because @@system_time_zone said GMT with offset 0 now,
// and a range on July's TIMESTAMP key lost the rows of the hour BST adds. SYSTEM is UTC only
// when the server converts every instant of the TIMESTAMP range as UTC does; otherwise the
// zone is unknown and the statement refused, naming the rewrite.
func TestTimestampKeyInSystemZoneWithDaylightSaving(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true, Env: []string{"TZ=Europe/London"}}, "hot", "cold", "ref")
	c := newKeyCluster(t, bs, "TIMESTAMP", monthsUTC(utc(2026, 6, 1, 0), utc(2026, 8, 1, 0), utc(2026, 7, 1, 0)),
		hourly(utc(2026, 6, 28, 0), utc(2026, 7, 3, 0)))
	var system string
	if err := c.ref.DB.QueryRow("SELECT @@system_time_zone").Scan(&system); err != nil {
		t.Fatal(err)
	}
	if got := system; got != "GMT" && got != "BST" {
		t.Fatalf("the servers' system zone is %q; want Europe/London's GMT or BST", got)
	}
	ob, ref := c.open(t, "", utc(2026, 8, 15, 12))
	queries := []string{
		"SELECT COUNT(*) FROM orders WHERE ts >= '2026-07-01 00:00:00' AND ts < '2026-07-01 03:00:00'",
		"SELECT COUNT(*), MIN(ts), MAX(ts) FROM orders WHERE ts >= '2026-06-30 20:00:00' AND ts < '2026-07-01 05:00:00'",
		"SELECT id, ts FROM orders WHERE ts BETWEEN '2026-06-30 22:00:00' AND '2026-07-01 02:00:00' ORDER BY id",
	}
	t.Run("SYSTEM", func(t *testing.T) {
		o, r := sessions(t, ob, ref)
		for _, q := range queries {
			want, err := zoneRows(r, q)
			if err != nil {
				t.Fatalf("reference: %s: %v", q, err)
			}
			got, err := zoneRows(o, q)
			switch {
			case err != nil && (!errors.Is(err, connector.ErrTimeZone) || !strings.Contains(err.Error(), "SET time_zone")):
				t.Errorf("obroute: %s: %v, want the rows or %v saying to SET time_zone", q, err, connector.ErrTimeZone)
			case err == nil && got != want:
				t.Errorf("%s:\nobroute:\n%s\none server:\n%s", q, got, want)
			}
		}
	})
	t.Run("SET time_zone", func(t *testing.T) {
		for _, zone := range []string{"Europe/London", "+01:00", "+00:00"} {
			o, r := sessions(t, ob, ref, "SET time_zone = '"+zone+"'")
			for _, q := range queries {
				same(t, o, r, q)
			}
		}
	})
}

// TestShardKeyOnUpdateCurrentTimestamp: a shard key declared DEFAULT CURRENT_TIMESTAMP ON
// UPDATE CURRENT_TIMESTAMP. An UPDATE that does not name it has the server set it to its clock:
// one server keeps the rows at their new time, obroute's October table kept them outside its
// span, and a read of the new time did not find them. Such an UPDATE is refused unless it
// changes only the newest table, open above, which holds the server's clock too; an INSERT
// without the key is refused (the server would give it its clock).
func TestShardKeyOnUpdateCurrentTimestamp(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	c := newKeyCluster(t, bs, "TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP", monthsUTC(utc(2026, 9, 1, 0), utc(2026, 11, 1, 0), utc(2026, 10, 1, 0)),
		hourly(utc(2026, 9, 28, 0), utc(2026, 11, 3, 0)))
	ob, ref := c.open(t, "&time_zone="+url.QueryEscape("'+00:00'"), utc(2026, 11, 15, 12))
	o, r := sessions(t, ob, ref)
	reads := []string{
		"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-11-02'",
		"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-10-01' AND ts < '2026-10-02'",
		"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-09-30' AND ts < '2026-11-03'",
	}
	ctx := context.Background()
	for _, w := range []struct {
		sql     string
		refused string // what the refusal says, "" when it runs
	}{
		{"UPDATE orders SET id = id + 100000 WHERE ts >= '2026-10-01' AND ts < '2026-10-01 06:00:00'", "ON UPDATE CURRENT_TIMESTAMP"},
		{"UPDATE orders SET id = id + 200000 WHERE ts >= '2026-10-31 20:00:00' AND ts < '2026-11-01 04:00:00'", "ON UPDATE CURRENT_TIMESTAMP"},
		{"UPDATE orders SET id = id + 300000 WHERE ts >= '2026-11-01 10:00:00' AND ts < '2026-11-01 13:00:00'", ""},
		{"INSERT INTO orders (id) VALUES (900001)", "must name its columns including the shard key"},
	} {
		_, err := o.ExecContext(ctx, w.sql)
		if w.refused != "" {
			if err == nil || !strings.Contains(err.Error(), w.refused) {
				t.Errorf("%s: %v; want it refused", w.sql, err)
			}
			if err == nil {
				if _, err := r.ExecContext(ctx, w.sql); err != nil {
					t.Fatalf("reference: %s: %v", w.sql, err)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", w.sql, err)
			continue
		}
		if _, err := r.ExecContext(ctx, w.sql); err != nil {
			t.Fatalf("reference: %s: %v", w.sql, err)
		}
	}
	for _, q := range reads {
		same(t, o, r, q)
	}
}

// TestTimestampKeyInsertOutOfRange: a TIMESTAMP holds the instants from 1970-01-01 00:00:01 to
// 2038-01-19 03:14:07 UTC. A row outside them is refused by the server in a strict sql_mode and
// stored as '0000-00-00 00:00:00' otherwise; obroute sent it to the table of the time written
// (the newest, open above, for 2040), where a read of zero times did not find it. Such a row is
// refused, naming the range in the session's zone.
func TestTimestampKeyInsertOutOfRange(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	tables := monthsUTC(utc(2026, 9, 1, 0), utc(2026, 11, 1, 0), utc(2026, 10, 1, 0))
	tables[0].Min, tables[0].Hot = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), true // holds all before, on hot
	c := newKeyCluster(t, bs, "TIMESTAMP", tables, hourly(utc(2026, 9, 28, 0), utc(2026, 10, 3, 0)))
	ob, ref := c.open(t, "", utc(2026, 11, 15, 12))
	ctx := context.Background()
	for _, s := range []struct{ zone, ts string }{
		{"+00:00", "2040-01-01 00:00:00"},
		{"+00:00", "2038-01-19 03:14:08"},
		{"+09:00", "2038-01-19 12:14:08"},
		{"+00:00", "1969-12-31 23:00:00"},
		{"+09:00", "1970-01-01 09:00:00"},
	} {
		o, r := sessions(t, ob, ref, "SET sql_mode = ''", "SET time_zone = '"+s.zone+"'")
		ins := "INSERT INTO orders (id, ts) VALUES (900001, '" + s.ts + "')"
		if _, err := r.ExecContext(ctx, ins); err != nil {
			t.Fatalf("reference: %s: %v", ins, err)
		}
		_, err := o.ExecContext(ctx, ins)
		if err == nil {
			for _, q := range []string{
				"SELECT COUNT(*) FROM orders WHERE ts < '2000-01-01'",
				"SELECT id FROM orders WHERE ts < '1980-01-01' ORDER BY id",
			} {
				same(t, o, r, q)
			}
		} else if !errors.Is(err, connector.ErrNoTimeRange) || !strings.Contains(err.Error(), "TIMESTAMP range") {
			t.Errorf("%s at %s: %v, want it stored as one server stores it or %v naming the TIMESTAMP range", ins, s.zone, err, connector.ErrNoTimeRange)
		}
		c.ref.Exec(t, "DELETE FROM orders WHERE id = 900001")
		c.hot.Exec(t, "DELETE FROM orders_202609 WHERE id = 900001")
		c.hot.Exec(t, "DELETE FROM orders_202611 WHERE id = 900001")
	}
}

// TestTimestampKeyAdviceInSessionZone: a refusal's advice gives a TIMESTAMP key's times as the
// session writes them, in its time zone, naming it. It gave the hot window's start as the UTC of
// the metadata, and in a +09:00 session the INSERT or range the message advised was still
// refused: '2026-10-01 00:00:00' there is nine hours before the window.
func TestTimestampKeyAdviceInSessionZone(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "ref")
	c := newKeyCluster(t, bs, "TIMESTAMP", monthsUTC(utc(2026, 9, 1, 0), utc(2026, 11, 1, 0), utc(2026, 10, 1, 0)),
		hourly(utc(2026, 9, 30, 0), utc(2026, 10, 2, 0)))
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: c.hot.DSN},
			{Name: "cold", Role: "cold", DSN: c.cold.DSN},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "ts", HotWindow: config.HotWindow{Months: 1}}},
		Metadata:   config.Metadata{Backend: "hot"},
	}
	conn, err := connector.New(cfg, connector.WithClock(func() time.Time { return utc(2026, 11, 15, 12) }))
	if err != nil {
		t.Fatal(err)
	}
	ob := sql.OpenDB(conn)
	defer ob.Close()
	ctx := context.Background()
	o, err := ob.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.ExecContext(ctx, "SET time_zone = '+09:00'"); err != nil {
		t.Fatal(err)
	}
	advised := func(err error, before string) string {
		t.Helper()
		if err == nil {
			t.Fatal("not refused")
		}
		msg := err.Error()
		i := strings.Index(msg, before)
		if i < 0 {
			t.Fatalf("%v: no %q", err, before)
		}
		rest := msg[i+len(before):]
		v, tail, ok := strings.Cut(rest, "'")
		if !ok || !strings.HasPrefix(tail, " (time zone +09:00)") {
			t.Fatalf("%v: the advised time does not name the session's zone", err)
		}
		return v
	}
	_, err = o.ExecContext(ctx, "INSERT INTO orders (id, ts) VALUES (900001, '2026-09-30 12:00:00')")
	from := advised(err, "hot window (from '")
	if _, err := o.ExecContext(ctx, "INSERT INTO orders (id, ts) VALUES (900002, ?)", from); err != nil {
		t.Errorf("INSERT at the start of the hot window the refusal gave, '%s': %v", from, err)
	}
	_, err = o.QueryContext(ctx, "/*+ OBROUTE(query_level=L1) */ SELECT COUNT(*) FROM orders WHERE ts >= '2026-09-30 20:00:00'")
	from = advised(err, "narrow the range to ts >= '")
	rows, err := o.QueryContext(ctx, "/*+ OBROUTE(query_level=L1) */ SELECT COUNT(*) FROM orders WHERE ts >= ?", from)
	if err != nil {
		t.Errorf("the range the refusal gave, ts >= '%s': %v", from, err)
	} else {
		rows.Close()
	}
}

// TestTimestampKeyTimeArgumentsInRepeatedHour: with parseTime and loc=Europe/Berlin in a
// Europe/Berlin session, a time.Time argument in either pass of the hour the autumn change
// repeats is sent by go-sql-driver as the same wall clock, which the server reads in the
// session's zone: obroute must read the argument as that wall clock, the instant the server
// sees, not as the time.Time's own instant; in the text protocol and prepared.
func TestTimestampKeyTimeArgumentsInRepeatedHour(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "hot", "cold", "ref")
	var tables []metadata.Table
	for d := utc(2026, 10, 23, 0); d.Before(utc(2026, 10, 28, 0)); d = d.AddDate(0, 0, 1) {
		tables = append(tables, metadata.Table{Name: "orders_" + d.Format("20060102"), Min: d, Max: d.AddDate(0, 0, 1).Add(-time.Second), Hot: !d.Before(utc(2026, 10, 25, 0))})
	}
	var times []time.Time
	for tm := utc(2026, 10, 24, 20); tm.Before(utc(2026, 10, 25, 4)); tm = tm.Add(10 * time.Minute) {
		times = append(times, tm)
	}
	c := newKeyCluster(t, bs, "TIMESTAMP(0)", tables, times)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	first := utc(2026, 10, 25, 0).Add(30 * time.Minute) // 02:30 CEST
	second := first.Add(time.Hour)                      // 02:30 CET
	for _, params := range []string{"&parseTime=true&loc=Europe%2FBerlin&interpolateParams=true", "&parseTime=true&loc=Europe%2FBerlin"} {
		t.Run(params, func(t *testing.T) {
			ob, ref := c.open(t, params, utc(2026, 10, 27, 12))
			o, r := sessions(t, ob, ref, "SET time_zone = 'Europe/Berlin'")
			answered := 0
			defer func() {
				if answered < 6 {
					t.Errorf("%d statements answered; want the >=, > and <> ones (refused: a range ending in the repeated hour)", answered)
				}
			}()
			for _, q := range []string{
				"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= ? AND ts < '2026-10-25 05:00:00'",
				"SELECT COUNT(*), SUM(id) FROM orders WHERE ts > ? AND ts < '2026-10-25 05:00:00'",
				"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < ?",
				"SELECT COUNT(*), SUM(id) FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' AND ts <> ?",
			} {
				for _, arg := range []time.Time{first.In(berlin), second.In(berlin), second} {
					want, err := zoneRows(r, q, arg)
					if err != nil {
						t.Fatalf("reference: %s: %v", q, err)
					}
					got, err := zoneRows(o, q, arg)
					switch {
					case err != nil && !errors.Is(err, connector.ErrTimeZone):
						t.Errorf("%s [%s]: %v, want the rows or %v", q, arg, err, connector.ErrTimeZone)
					case err == nil && got != want:
						t.Errorf("%s [%s]:\nobroute:\n%s\none server:\n%s", q, arg, got, want)
					case err == nil:
						answered++
					}
				}
			}
		})
	}
}

// TestTimestampKeyRepeatedHourUnion: in a Europe/Berlin session the two instants of the hour
// the autumn change repeats are sent as one wall clock. One server's UNION (DISTINCT) keeps
// both, comparing the instants; a merge of the sub-queries' rows compared the wall clocks and
// kept one. Such a UNION across tables is refused, as GROUP BY and DISTINCT of the key are.
func TestTimestampKeyRepeatedHourUnion(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "hot", "cold", "ref")
	var tables []metadata.Table
	for d := utc(2026, 10, 23, 0); d.Before(utc(2026, 10, 28, 0)); d = d.AddDate(0, 0, 1) {
		tables = append(tables, metadata.Table{Name: "orders_" + d.Format("20060102"), Min: d, Max: d.AddDate(0, 0, 1).Add(-time.Second), Hot: !d.Before(utc(2026, 10, 25, 0))})
	}
	var times []time.Time
	for tm := utc(2026, 10, 24, 20); tm.Before(utc(2026, 10, 26, 4)); tm = tm.Add(10 * time.Minute) {
		times = append(times, tm)
	}
	c := newKeyCluster(t, bs, "TIMESTAMP(0)", tables, times)
	ob, ref := c.open(t, "", utc(2026, 10, 27, 12))
	o, r := sessions(t, ob, ref, "SET time_zone = 'Europe/Berlin'")
	answered := 0
	for _, q := range []string{
		"SELECT ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' UNION SELECT ts FROM orders WHERE ts >= '2026-10-25 01:00:00' AND ts < '2026-10-25 06:00:00' ORDER BY 1",
		"SELECT id, ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' UNION SELECT id, ts FROM orders WHERE ts >= '2026-10-25 01:00:00' AND ts < '2026-10-25 06:00:00' ORDER BY id",
		"SELECT id, ts FROM orders WHERE ts >= '2026-10-25 20:00:00' AND ts < '2026-10-25 23:00:00' UNION SELECT id, ts FROM orders WHERE ts >= '2026-10-26 01:00:00' AND ts < '2026-10-26 02:00:00' ORDER BY ts",
		"SELECT ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' UNION SELECT ts FROM orders WHERE ts >= '2026-10-25 01:00:00' AND ts < '2026-10-25 06:00:00'",
		"SELECT id, ts FROM orders WHERE ts >= '2026-10-24 23:00:00' AND ts < '2026-10-25 05:00:00' UNION ALL SELECT id, ts FROM orders WHERE ts >= '2026-10-25 03:00:00' AND ts < '2026-10-25 06:00:00' ORDER BY id",
	} {
		want, err := zoneRows(r, q)
		if err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
		got, err := zoneRows(o, q)
		switch {
		case err != nil && !errors.Is(err, connector.ErrNotMergeable) && !errors.Is(err, connector.ErrTimeZone):
			t.Errorf("%s: %v, want the rows or a refusal", q, err)
		case err == nil && got != want:
			t.Errorf("%s:\nobroute:\n%s\none server:\n%s", q, got, want)
		case err == nil:
			answered++
		}
	}
	if answered < 2 {
		t.Errorf("%d statements answered; want the UNION ALL and the UNION away from the repeated hour", answered)
	}
}

// TestSplitOtherTimestampColumnInRepeatedHour: a TIMESTAMP column other than the shard key,
// t2, in a Europe/Berlin session. The server sends the two instants of the hour the autumn
// change repeats as one wall clock; the merge of a split DISTINCT t2 or GROUP BY t2 kept one
// group for both (48 rows where one server gives 54), and ORDER BY t2 or MIN/MAX(t2) compared
// them as equal. Such a merge is refused, saying to SET time_zone to an offset, which answers
// it as one server does.
func TestSplitOtherTimestampColumnInRepeatedHour(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{TimeZones: true}, "hot", "cold", "ref")
	var tables []metadata.Table
	for d := utc(2026, 10, 23, 0); d.Before(utc(2026, 10, 28, 0)); d = d.AddDate(0, 0, 1) {
		tables = append(tables, metadata.Table{Name: "orders_" + d.Format("20060102"), Min: d, Max: d.AddDate(0, 0, 1).Add(-time.Second), Hot: !d.Before(utc(2026, 10, 25, 0))})
	}
	var times []time.Time
	for tm := utc(2026, 10, 24, 20); tm.Before(utc(2026, 10, 26, 4)); tm = tm.Add(10 * time.Minute) {
		times = append(times, tm)
	}
	c := newKeyCluster(t, bs, "TIMESTAMP(0)", tables, times)
	c.ref.Exec(t, "ALTER TABLE orders ADD t2 TIMESTAMP NULL")
	c.ref.Exec(t, "UPDATE orders SET t2 = ts")
	for _, tb := range tables {
		b := c.cold
		if tb.Hot {
			b = c.hot
		}
		b.Exec(t, "ALTER TABLE "+tb.Name+" ADD t2 TIMESTAMP NULL")
		b.Exec(t, "UPDATE "+tb.Name+" SET t2 = ts")
	}
	ob, ref := c.open(t, "", utc(2026, 10, 27, 12))
	queries := []string{
		"SELECT DISTINCT t2 FROM orders WHERE ts >= '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00'",
		"SELECT t2, COUNT(*) FROM orders WHERE ts >= '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00' GROUP BY t2",
		"SELECT id, t2 FROM orders WHERE ts >= '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00' ORDER BY t2, id DESC",
		"SELECT MAX(t2), MIN(t2) FROM orders WHERE ts >= '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00'",
		"SELECT id FROM orders WHERE ts >= '2026-10-24 20:00:00' AND ts < '2026-10-25 06:00:00' AND t2 >= '2026-10-25 02:30:00' ORDER BY id",
	}
	o, r := sessions(t, ob, ref, "SET time_zone = 'Europe/Berlin'")
	answered := 0
	for _, q := range queries {
		want, err := zoneRows(r, q)
		if err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
		got, err := zoneRows(o, q)
		switch {
		case err != nil && (!errors.Is(err, connector.ErrNotMergeable) || !strings.Contains(err.Error(), "SET time_zone to an offset")):
			t.Errorf("%s: %v, want the rows or %v saying to SET time_zone", q, err, connector.ErrNotMergeable)
		case err == nil && got != want:
			t.Errorf("%s:\nobroute:\n%s\none server:\n%s", q, got, want)
		case err == nil:
			answered++
		}
	}
	if answered == 0 {
		t.Error("nothing answered; want the statement that compares no TIMESTAMP in the merge")
	}
	// In an offset zone every one is answered as one server does.
	o, r = sessions(t, ob, ref, "SET time_zone = '+01:00'")
	for _, q := range queries {
		same(t, o, r, q)
	}
}
