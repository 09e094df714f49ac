package connector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/sqltest"
)

// probeConnections returns the server connections of b that ran the service probe, and the
// number of connections opened on b at all, from its general log.
func probeConnections(t *testing.T, b *sqltest.Backend) (probes []int64, connects int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, e := range b.GeneralLog(t) {
		switch {
		case e.Command == "Connect":
			connects++
		case e.Text == config.DefaultServiceProbe && !seen[e.ConnID]:
			seen[e.ConnID] = true
			probes = append(probes, e.ConnID)
		}
	}
	return probes, connects
}

// Over 30 s of probes every 200 ms, the monitor of a service backend opens one
// connection per candidate, and one more only after a probe connection failed.
func TestServiceProbeKeepsItsConnections(t *testing.T) {
	bs := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "east", "west")
	east, west := bs[0], bs[1]
	for _, b := range bs {
		b.Exec(t, "CREATE USER app@'%' IDENTIFIED BY 'app-pw'")
		b.Exec(t, "GRANT ALL ON test.* TO app@'%'")
	}
	west.Exec(t, "SET GLOBAL read_only = 1")
	const interval, span = 200 * time.Millisecond, 30 * time.Second
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=app@SERVICE:orders:app-pw@tcp(127.0.0.1:1)/test;services.orders.candidates=%s,%s;services.orders.interval=%s",
		east.Addr, west.Addr, interval)
	db, _, closeCheck := resilient(t, dsn)
	start := time.Now()
	if _, err := db.Exec("SELECT 1"); err != nil { // the primary is found
		t.Fatal(err)
	}
	time.Sleep(span / 3)
	// A probe connection dies: the next round opens another one.
	killed, _ := probeConnections(t, west)
	if len(killed) != 1 {
		t.Fatalf("west: %d probe connections after %s, want 1", len(killed), time.Since(start))
	}
	west.Exec(t, fmt.Sprintf("KILL CONNECTION %d", killed[0]))
	time.Sleep(span - time.Since(start))
	rounds := int(time.Since(start) / interval)
	closeCheck(bs...)

	eastProbes, eastConnects := probeConnections(t, east)
	westProbes, westConnects := probeConnections(t, west)
	t.Logf("%s, about %d probe rounds: east %d probe connections (%d connections in all, with the application's server session), west %d (%d in all, one probe connection killed)",
		span, rounds, len(eastProbes), eastConnects, len(westProbes), westConnects)
	if len(eastProbes) != 1 || eastConnects != 2 {
		t.Errorf("east: %d probe connections, %d connections in all; want 1 and 2 (the probe's and the application's)", len(eastProbes), eastConnects)
	}
	if len(westProbes) != 2 || westConnects != 2 {
		t.Errorf("west: %d probe connections, %d connections in all; want 2 and 2 (the first probe connection was killed)", len(westProbes), westConnects)
	}
}
