package connector_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
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
