package routing

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/metadata"
)

// keyed is a router over monthly tables of orders from August to December 2026 (hot from
// October), today 2026-11-15 12:00 UTC, whose shard key order_time has the type typ in every
// table, with Go's zone database for named zones.
func keyed(t *testing.T, typ ShardKeyType, tables []metadata.Table, change ...func(*TimeConfig)) *fixture {
	t.Helper()
	if tables == nil {
		tables = monthlyTables("2026-08-01", "2026-12-01", "2026-10-01")
	}
	f := bareFixture(t, ordersTable(), tables, "2026-11-15 12:00:00", func(c *TimeConfig) {
		c.LoadZone = time.LoadLocation
		c.TimeZone = "+00:00"
		for _, ch := range change {
			ch(c)
		}
	})
	cols := map[string]ShardKeyColumn{}
	for _, tb := range tables {
		cols[tb.Name] = ShardKeyColumn{Type: typ, DataType: strings.ToLower(typ.String())}
	}
	f.r.SetShardKeyColumns(cols)
	return f
}

func inZone(zone string) Input { return Input{Session: &SessionState{TimeZone: zone}} }

// A TIMESTAMP key is read in the session's time zone: a range of +09:00 wall clocks is the
// UTC instants nine hours before, and each table's clamp is its UTC span as +09:00 wall clocks.
func TestTimestampKeyReadInTheSessionZone(t *testing.T) {
	f := keyed(t, ShardKeyTimestamp, nil)
	const sql = "select count(*) from orders where order_time >= '2026-11-01 00:00:00' and order_time < '2026-11-01 09:00:00'"
	p, err := f.route(sql, nil, inZone("+09:00"))
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, p, []wantTarget{{"hot", "select count(*) from orders_202610 where order_time >= '2026-11-01 00:00:00' and order_time < '2026-11-01 09:00:00' and orders_202610.order_time >= '2026-10-01 09:00:00' and orders_202610.order_time < '2026-11-01 09:00:00'", nil}})
	if !saysIn(p.Prompts, "range [2026-10-31 15:00:00, 2026-11-01 00:00:00) UTC on order_time") {
		t.Errorf("prompts %q, want the range as UTC instants", p.Prompts)
	}
	// The same range in a UTC session is November's.
	p, err = f.route(sql, nil, inZone("+00:00"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Targets[0].Tables; !reflect.DeepEqual(got, []string{"orders_202611"}) {
		t.Errorf("UTC session: tables %v, want orders_202611", got)
	}
	// -05:00 and +05:30, a split.
	p, err = f.route("select id from orders where order_time >= '2026-10-31 18:00:00' and order_time < '2026-11-01 05:30:00' order by id", nil, inZone("-05:00"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Targets) != 1 || !strings.Contains(p.Targets[0].SQL, "orders_202611.order_time >= '2026-10-31 19:00:00' and orders_202611.order_time < '2026-11-30 19:00:00'") ||
		!strings.Contains(p.Targets[0].SQL, "orders_202610.order_time >= '2026-09-30 19:00:00' and orders_202610.order_time < '2026-10-31 19:00:00'") {
		t.Errorf("-05:00: %+v, want orders_202610 and orders_202611 clamped at -05:00 wall clocks", p.Targets)
	}
	// With no SET, the backends' default zone.
	p, err = f.route(sql, nil, Input{})
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_202611"}) {
		t.Errorf("default zone +00:00: %v, %v; want orders_202611", p, err)
	}
}

func saysIn(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}

// A DATE key's clamps are DATE literals: no DATETIME with a time part meets the column.
func TestDateKeyClampsAreDates(t *testing.T) {
	tables := []metadata.Table{
		{Name: "orders_202609", Min: day("2026-09-01"), Max: day("2026-09-30"), Hot: false},
		{Name: "orders_202610", Min: day("2026-10-01"), Max: day("2026-10-31 00:00:00"), Hot: true},
		{Name: "orders_202611", Min: day("2026-11-01 12:00:00"), Max: day("2026-11-30"), Hot: true},
		{Name: "orders_202612", Min: day("2026-12-01"), Max: day("2026-12-31"), Hot: true},
	}
	f := keyed(t, ShardKeyDate, tables)
	p, err := f.route("select max(order_time) from orders where order_time >= '2026-10-15' and order_time < '2026-11-15'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"orders_202610.order_time >= DATE'2026-10-01' and orders_202610.order_time <= DATE'2026-10-31'",
		"orders_202611.order_time >= DATE'2026-11-02' and orders_202611.order_time <= DATE'2026-11-30'"} {
		if !strings.Contains(p.Targets[0].SQL, want) {
			t.Errorf("sub-query %s\nwant %s", p.Targets[0].SQL, want)
		}
	}
	if strings.Contains(p.Targets[0].SQL, "00:00:01") {
		t.Errorf("sub-query %s compares the DATE with a time", p.Targets[0].SQL)
	}
	// An INSERT stores the day: 2026-10-31 12:00 is October's 31st.
	p, err = f.route("insert into orders (id, order_time) values (1, '2026-10-31 12:00:00')", nil, Input{})
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_202610"}) {
		t.Errorf("INSERT: %v, %v; want orders_202610", p, err)
	}
}

// In Europe/Berlin the clocks go back on 2026-10-25 at 03:00 CEST (01:00 UTC) to 02:00 CET, and
// forward on 2026-03-29 at 02:00 CET (01:00 UTC).
func TestTimestampKeyAcrossDaylightSaving(t *testing.T) {
	days := func(from, to string) []metadata.Table {
		var out []metadata.Table
		for d := day(from); !d.After(day(to)); d = d.AddDate(0, 0, 1) {
			out = append(out, metadata.Table{Name: "orders_" + d.Format("20060102"), Min: d, Max: d.AddDate(0, 0, 1).Add(-time.Second), Hot: !d.Before(day("2026-10-24"))})
		}
		return out
	}
	f := keyed(t, ShardKeyTimestamp, days("2026-10-20", "2026-10-30"))
	berlin := inZone("Europe/Berlin")
	cases := []struct {
		name, sql string
		tables    []string // nil: refused with ErrTimeZone
		clamp     string   // a part of the first sub-query
	}{
		{name: "a range ending in the repeated hour", sql: "select id from orders where order_time >= '2026-10-25 01:00:00' and order_time < '2026-10-25 02:30:00'"},
		{name: "= a time of the repeated hour", sql: "select id from orders where order_time = '2026-10-25 02:30:00'"},
		{name: "BETWEEN ending in it", sql: "select id from orders where order_time between '2026-10-24' and '2026-10-25 02:00:00'"},
		{name: "NOT (>=) is an end", sql: "select id from orders where order_time > '2026-10-24' and not (order_time >= '2026-10-25 02:59:59')"},
		{name: "a range starting in it", sql: "select id from orders where order_time >= '2026-10-25 02:30:00' and order_time < '2026-10-25 04:00:00'",
			tables: []string{"orders_20261025"}},
		{name: "<> a time in it", sql: "select id from orders where order_time > '2026-10-24 20:00:00' and order_time < '2026-10-25 06:00:00' and order_time <> '2026-10-25 02:30:00'",
			tables: []string{"orders_20261024", "orders_20261025"}},
		{name: "ending at its end", sql: "select id from orders where order_time >= '2026-10-25 01:00:00' and order_time < '2026-10-25 03:00:00'",
			tables: []string{"orders_20261024", "orders_20261025"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.route(c.sql, nil, berlin)
			if c.tables == nil {
				if !errors.Is(err, ErrTimeZone) || !strings.Contains(err.Error(), "the hour from 2026-10-25 02:00:00 to 2026-10-25 03:00:00 repeats") || !strings.Contains(err.Error(), "SET time_zone to an offset") {
					t.Fatalf("error %v, want ErrTimeZone naming the repeated hour and the rewrite", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := planTables(p); !reflect.DeepEqual(got, c.tables) {
				t.Errorf("tables %v, want %v", got, c.tables)
			}
		})
	}
	// The table boundary 2026-10-25 00:00 UTC is 02:00 CEST, whose wall clock 02:00 CET (01:00
	// UTC) repeats: that clamp compares the instant.
	p, err := f.route("select id from orders where order_time >= '2026-10-24 23:00:00' and order_time < '2026-10-25 05:00:00'", nil, berlin)
	if err != nil {
		t.Fatal(err)
	}
	sql := p.Targets[0].SQL
	for _, want := range []string{"orders_20261024.order_time >= '2026-10-24 02:00:00' and unix_timestamp(orders_20261024.order_time) < 1792886400",
		"unix_timestamp(orders_20261025.order_time) >= 1792886400 and orders_20261025.order_time < '2026-10-26 01:00:00'"} {
		if !strings.Contains(sql, want) {
			t.Errorf("sub-query %s\nwant %s", sql, want)
		}
	}
	// The merge reads the two passes of the hour as one wall clock: ordering across that
	// boundary is refused, ordering elsewhere is not.
	_, err = f.route("select id, order_time from orders where order_time >= '2026-10-24 23:00:00' and order_time < '2026-10-25 05:00:00' order by order_time", nil, berlin)
	if !errors.Is(err, ErrNotMergeable) || !strings.Contains(err.Error(), "SET time_zone to an offset") {
		t.Errorf("ORDER BY across the repeated hour: %v, want ErrNotMergeable", err)
	}
	if _, err = f.route("select id, order_time from orders where order_time >= '2026-10-22 12:00:00' and order_time < '2026-10-23 12:00:00' order by order_time", nil, berlin); err != nil {
		t.Errorf("ORDER BY away from it: %v", err)
	}
	_, err = f.route("select order_time, count(*) from orders where order_time >= '2026-10-25 00:00:00' and order_time < '2026-10-26 12:00:00' group by order_time", nil, berlin)
	if !errors.Is(err, ErrNotMergeable) {
		t.Errorf("GROUP BY a range holding the repeated hour: %v, want ErrNotMergeable", err)
	}
	if _, err = f.route("select user_id, count(*) from orders where order_time >= '2026-10-25 00:00:00' and order_time < '2026-10-26 12:00:00' group by user_id", nil, berlin); err != nil {
		t.Errorf("GROUP BY another column: %v", err)
	}
	// INSERT: a repeated wall clock is stored as its first instant (00:30 UTC, October 25th's
	// table), a skipped one is refused.
	p, err = f.route("insert into orders (id, order_time) values (1, '2026-10-25 02:30:00')", nil, berlin)
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_20261025"}) {
		t.Errorf("INSERT in the repeated hour: %v, %v; want orders_20261025", p, err)
	}
	p, err = f.route("insert into orders (id, order_time) values (1, '2026-10-25 01:30:00')", nil, berlin)
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_20261024"}) {
		t.Errorf("INSERT of 01:30 CEST (23:30 UTC): %v, %v; want orders_20261024", p, err)
	}
}

// The wall clocks of the skipped spring hour are no instant: as a range bound they are the
// instant the clocks jump at, as a value inserted they are refused.
func TestTimestampKeySkippedHour(t *testing.T) {
	f := keyed(t, ShardKeyTimestamp, monthlyTables("2026-02-01", "2026-04-01", "2026-02-01"))
	p, err := f.route("select id from orders where order_time >= '2026-03-29 02:30:00' and order_time < '2026-03-29 03:30:00'", nil, inZone("Europe/Berlin"))
	if err != nil || !saysIn(p.Prompts, "range [2026-03-29 01:00:00, 2026-03-29 01:30:00) UTC") {
		t.Errorf("SELECT in the skipped hour: %v, %v; want the range [01:00, 01:30) UTC", p, err)
	}
	_, err = f.route("insert into orders (id, order_time) values (1, '2026-03-29 02:30:00')", nil, inZone("Europe/Berlin"))
	if !errors.Is(err, ErrTimeZone) || !strings.Contains(err.Error(), "does not exist in time zone Europe/Berlin") {
		t.Errorf("error %v, want ErrTimeZone: 02:30 does not exist on 2026-03-29 in Berlin", err)
	}
	// An INSERT in a +09:00 session goes to the table holding the stored UTC instant.
	p, err = f.route("insert into orders (id, order_time) values (1, '2026-03-01 05:00:00')", nil, inZone("+09:00"))
	if err != nil || !reflect.DeepEqual(p.Targets[0].Tables, []string{"orders_202602"}) {
		t.Errorf("INSERT at +09:00: %v, %v; want orders_202602 (2026-02-28 20:00 UTC)", p, err)
	}
}

// A session time zone obroute does not know cannot read a TIMESTAMP: refused, with the rewrite.
func TestTimestampKeyInAnUnknownZone(t *testing.T) {
	f := keyed(t, ShardKeyTimestamp, nil)
	_, err := f.route("select id from orders where order_time >= '2026-11-01'", nil, inZone("Mars/Olympus_Mons"))
	if !errors.Is(err, ErrTimeZone) || !strings.Contains(err.Error(), "SET time_zone to an offset") {
		t.Errorf("error %v, want ErrTimeZone", err)
	}
}

// The hot window of a TIMESTAMP key counts UTC's calendar, the calendar of its metadata.
func TestTimestampKeyHotWindowIsUTC(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	// With loc=Asia/Tokyo a DATETIME key's window counts Tokyo's calendar, where it is December.
	tables := monthlyTables("2026-08-01", "2026-12-01", "2026-09-01")
	f := keyed(t, ShardKeyTimestamp, tables, func(c *TimeConfig) { c.Location = tokyo })
	f.now = day("2026-11-30 20:00:00") // 2026-12-01 05:00 at +09:00
	p, err := f.route("/*+ OBROUTE(query_level=L1) */ select id from orders where order_time >= '2026-09-01 09:00:00'", nil, inZone("+09:00"))
	if err != nil {
		t.Fatalf("L1 from 2026-09-01 00:00 UTC (the window's start at November, UTC): %v", err)
	}
	if p.Level.String() != "L1" {
		t.Errorf("level %s, want L1", p.Level)
	}
	_, err = f.route("/*+ OBROUTE(query_level=L1) */ select id from orders where order_time >= '2026-09-01 08:59:59'", nil, inZone("+09:00"))
	if !errors.Is(err, ErrLevelViolation) {
		t.Errorf("a second before: %v, want ErrLevelViolation", err)
	}
	d := keyed(t, ShardKeyDatetime, tables, func(c *TimeConfig) { c.Location = tokyo })
	d.now = f.now
	if _, err := d.route("/*+ OBROUTE(query_level=L1) */ select id from orders where order_time >= '2026-09-01 09:00:00'", nil, Input{}); !errors.Is(err, ErrLevelViolation) {
		t.Errorf("a DATETIME key counts Tokyo's calendar (window from 2026-10-01): %v, want ErrLevelViolation", err)
	}
}

// NOW() is sent to the server as a wall clock, which in the second pass of a repeated hour it
// reads as the first pass: refused for a TIMESTAMP key, and read exactly elsewhere.
func TestTimestampKeyClockInTheRepeatedHour(t *testing.T) {
	f := keyed(t, ShardKeyTimestamp, nil)
	f.now = day("2026-10-25 01:30:00") // 02:30 CET, the second pass
	const sql = "select id from orders where order_time >= now() - interval 1 day"
	_, err := f.route(sql, nil, inZone("Europe/Berlin"))
	if !errors.Is(err, ErrTimeZone) || !strings.Contains(err.Error(), "second pass") {
		t.Errorf("error %v, want ErrTimeZone", err)
	}
	f.now = day("2026-10-25 00:30:00") // 02:30 CEST, the first pass
	if _, err := f.route(sql, nil, inZone("Europe/Berlin")); err != nil {
		t.Errorf("first pass: %v", err)
	}
	f.now = day("2026-10-25 01:30:00")
	if _, err := f.route(sql, nil, inZone("+01:00")); err != nil {
		t.Errorf("an offset: %v", err)
	}
}

// Tables of one logical table with different shard-key types, or a type obroute does not
// route by, refuse the statement; a type not read yet is taken from the tables read.
func TestShardKeyTypes(t *testing.T) {
	f := keyed(t, ShardKeyDatetime, nil)
	f.r.SetShardKeyColumns(map[string]ShardKeyColumn{"orders_202612": {Type: ShardKeyTimestamp, DataType: "timestamp"}})
	_, err := f.route("select id from orders where order_time >= '2026-11-01'", nil, Input{})
	if !errors.Is(err, ErrShardKeyType) || !strings.Contains(err.Error(), "orders_202612") {
		t.Errorf("mixed types: %v, want ErrShardKeyType naming orders_202612", err)
	}
	f = keyed(t, ShardKeyDatetime, nil)
	f.r.SetShardKeyColumns(map[string]ShardKeyColumn{"orders_202608": {Type: ShardKeyOther, DataType: "varchar"}})
	_, err = f.route("select id from orders where order_time >= '2026-11-01'", nil, Input{})
	if !errors.Is(err, ErrShardKeyType) || !strings.Contains(err.Error(), "VARCHAR") {
		t.Errorf("a VARCHAR key: %v, want ErrShardKeyType", err)
	}
}

// With no table's column read, a statement is routed only where every type reads it alike:
// a UTC session over tables of whole days.
func TestShardKeyTypeNotRead(t *testing.T) {
	f := bareFixture(t, ordersTable(), monthlyTables("2026-08-01", "2026-12-01", "2026-10-01"), "2026-11-15 12:00:00", func(c *TimeConfig) { c.TimeZone = "+00:00" })
	const sql = "select id from orders where order_time >= '2026-11-01'"
	if _, err := f.route(sql, nil, Input{}); err != nil {
		t.Errorf("UTC, whole days: %v", err)
	}
	_, err := f.route(sql, nil, inZone("+09:00"))
	if !errors.Is(err, ErrShardKeyType) || !strings.Contains(err.Error(), "SET time_zone = '+00:00'") {
		t.Errorf("+09:00: %v, want ErrShardKeyType", err)
	}
}

// Backends whose server sessions start in different zones read a TIMESTAMP differently: refused
// unless the session sets its own zone.
func TestTimestampKeyBackendsInDifferentZones(t *testing.T) {
	f := keyed(t, ShardKeyTimestamp, nil)
	f.r.SetBackendServer("hot", FlavorMariaDB, "", "+00:00")
	f.r.SetBackendServer("cold", FlavorMariaDB, "", "+09:00")
	const sql = "select id from orders where order_time >= '2026-09-15' and order_time < '2026-10-15'"
	_, err := f.route(sql, nil, Input{})
	if !errors.Is(err, ErrTimeZone) || !strings.Contains(err.Error(), "backend cold starts its server sessions in time zone +09:00") {
		t.Errorf("error %v, want ErrTimeZone naming cold", err)
	}
	if _, err := f.route(sql, nil, inZone("+00:00")); err != nil {
		t.Errorf("with SET time_zone: %v", err)
	}
}
