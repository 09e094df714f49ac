package connector

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/obroute/obroute/internal/routing"
)

// The client session's time zone decides what NOW() and CURDATE() mean in a statement on a
// time-sharded table, which obroute folds into the statement's range and sends to every
// sub-query as one instant (routing/time_zone.go). The zone is the one the client session set
// with SET time_zone, else the backends' default, read back from the metadata backend with the
// first load of the shard metadata (within the first statement that needs it).

// timeZone returns the time_zone the client session set for production traffic, or for shadow
// traffic when shadow traffic set its own; "" when it set none.
func (cs *clientSession) timeZone(shadow bool) string {
	if shadow {
		if v := cs.shadowState.variable("time_zone"); v != nil {
			return cs.zoneOf(v)
		}
	}
	if v := cs.state.variable("time_zone"); v != nil {
		return cs.zoneOf(v)
	}
	return ""
}

// timestamp returns the assignment of the timestamp variable the client session made for the
// traffic (SET timestamp = …: the session's clock), nil when it made none.
func (cs *clientSession) timestamp(shadow bool) *routing.SessionVar {
	if shadow {
		if v := cs.shadowState.variable("timestamp"); v != nil {
			return v
		}
	}
	return cs.state.variable("timestamp")
}

// zoneOf reads the zone a time_zone assignment gives, remembering the last one read.
func (cs *clientSession) zoneOf(v *routing.SessionVar) string {
	if cs.zoneMemo[0] != v.Assignment {
		z, _ := v.Literal()
		cs.zoneMemo = [2]string{v.Assignment, z}
	}
	return cs.zoneMemo[1]
}

// variable returns the layer's assignment of the variable name, nil when it has none.
func (st *sessionState) variable(name string) *routing.SessionVar {
	for i := range st.vars {
		if st.vars[i].Name == name {
			return &st.vars[i]
		}
	}
	return nil
}

// utcNames are the names a server gives its system time zone when it may be UTC. GMT is also
// Europe/London's (and Dublin's, Lisbon's) name in winter: a name alone never says that SYSTEM
// is UTC (serverZone.probe).
var utcNames = map[string]bool{"UTC": true, "GMT": true, "Etc/UTC": true, "Etc/GMT": true, "UCT": true, "Universal": true, "Zulu": true}

// defaultTimeZone reads back, on a server session of the metadata backend, the time zone
// a server session starts with (the global time_zone, or the DSN's time_zone parameter) and
// what SYSTEM means there. A named zone whose offset now differs from Go's zone database, or a
// system zone other than UTC, is left unknown (""/nil): routing then widens NOW() by the
// largest offset instead of guessing. A change of the backends' global time_zone needs a
// restart of the connector.
func defaultTimeZone(ctx context.Context, db *sql.DB) (name string, system *time.Location) {
	var z serverZone
	err := db.QueryRowContext(ctx, "SELECT @@session.time_zone, @@system_time_zone, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())").Scan(&z.name, &z.system, &z.offset)
	if err != nil {
		return "", nil
	}
	z.probe(ctx, db)
	return z.resolve()
}

// serverZone is what a server session says of its time zone: @@session.time_zone,
// @@system_time_zone, and its offset from UTC now in seconds; systemUTC when the server was
// seen to convert every day of the TIMESTAMP range in its system zone as UTC (probe).
type serverZone struct {
	name, system string
	offset       int64
	systemUTC    bool
}

// systemProbe counts the instants every fifth day from 1970-01-02 to 2038-01-18 (noon UTC)
// that the server's system zone gives another wall clock than UTC: 0 when SYSTEM is UTC over
// the range a TIMESTAMP holds. No zone has kept daylight saving, or another offset, for less
// than five days.
const systemProbe = "SELECT COUNT(*) FROM (SELECT TIMESTAMP'1970-01-02 12:00:00' + INTERVAL 5 * (a.n + 10 * b.n + 100 * c.n + 1000 * d.n) DAY AS day " +
	"FROM (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS a, " +
	"(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS b, " +
	"(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS c, " +
	"(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS d) AS days " +
	"WHERE day < TIMESTAMP'2038-01-19 00:00:00' AND CONVERT_TZ(day, '+00:00', 'SYSTEM') <> day"

// probe sets z.systemUTC when the system zone's name and offset now may be UTC's and the server
// converts every day of the TIMESTAMP range in it as UTC (systemProbe): Europe/London says GMT
// with offset 0 in winter.
func (z *serverZone) probe(ctx context.Context, db *sql.DB) {
	if !utcNames[z.system] || z.offset != 0 {
		return
	}
	var n int64
	if err := db.QueryRowContext(ctx, systemProbe).Scan(&n); err == nil && n == 0 {
		z.systemUTC = true
	}
}

// key names the zone a server session starts in so that two servers' zones compare equal only
// when they are the same: a named zone or an offset by its name, SYSTEM by the system zone and
// its offset now (or UTC, when probed so).
func (z serverZone) key() string {
	if strings.EqualFold(z.name, "system") {
		if z.systemUTC {
			return "SYSTEM (UTC)"
		}
		return "SYSTEM (" + z.system + ", UTC" + strconv.FormatInt(z.offset, 10) + "s)"
	}
	return z.name
}

// resolve reads z as defaultTimeZone returns it.
func (z serverZone) resolve() (name string, system *time.Location) {
	name = z.name
	if z.systemUTC {
		system = time.UTC
	}
	switch {
	case strings.EqualFold(name, "system"), name == "", name[0] == '+' || name[0] == '-':
		return name, system
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return "", system
	}
	if _, off := time.Now().In(loc).Zone(); int64(off) != z.offset {
		return "", system
	}
	return name, system
}
