package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// awaitAccepted waits until accepted reaches n, failing the test if it does not within 10 s.
func awaitAccepted(t *testing.T, accepted *atomic.Int64, n int64, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); accepted.Load() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d connections reached the candidate, want %d", what, accepted.Load(), n)
		}
	}
}

// TestServiceConnectsAtFirstStatement: building the connector of a service backend connects to
// none of its candidates; the first statement runs the first probe round within its own
// context, so with one candidate that accepts and never answers, a statement with a 300 ms
// deadline fails with the deadline's error, and a later statement probes again and, once the
// round ends, runs on the candidate that is the primary.
func TestServiceConnectsAtFirstStatement(t *testing.T) {
	primary := sqltest.Shared(t, "svclazy")[0]
	mc, err := mysql.ParseDSN(primary.DSN)
	if err != nil {
		t.Fatal(err)
	}
	silent, accepted := silentListener(t)
	login := mc.User
	if mc.Passwd != "" {
		login += ":" + strings.ReplaceAll(mc.Passwd, ";", ";;") // ";;" escapes ";" in an obroute DSN
	}
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s@SERVICE:orders@tcp(127.0.0.1:1)/%s;services.orders.candidates=%s,%s;services.orders.interval=1s",
		login, mc.DBName, silent, primary.Addr)
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if n := accepted.Load(); n != 0 {
		t.Fatalf("connector.New connected %d times to a candidate; it must connect to none", n)
	}
	if n := primary.Connections(t); n != 0 {
		t.Fatalf("connector.New opened %d connections on the primary; it must open none", n)
	}

	for i := 1; i <= 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		_, err := db.ExecContext(ctx, "SELECT 1")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("statement %d with a 300 ms deadline: %v; want the deadline's error", i, err)
		}
		t.Logf("statement %d returned %v after %s", i, err, time.Since(start))
		awaitAccepted(t, accepted, int64(i), fmt.Sprintf("statement %d", i))
	}
	var one int
	if err := db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("statement without a deadline: %d, %v; want 1 from the primary", one, err)
	}
}
