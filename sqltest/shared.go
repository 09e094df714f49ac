package sqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Shared creates one fresh, uniquely named database per name on the existing
// server named by env OBROUTE_TEST_DSN (default root@tcp(127.0.0.1:3306)/)
// and drops it at cleanup. The server is shared with other tests, so Stop,
// Kill, Pause and the like fail the test; use [MariaDB] for those. When the
// server cannot be reached the test is skipped (failed under
// [RequireServers]).
func Shared(tb testing.TB, names ...string) []*Backend {
	tb.Helper()
	dsn := os.Getenv(EnvTestDSN)
	if dsn == "" {
		dsn = DefaultTestDSN
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("sqltest: %s is not a go-sql-driver DSN (want e.g. %s): %v", EnvTestDSN, DefaultTestDSN, err)
	}
	if cfg.Net != "tcp" {
		tb.Fatalf("sqltest: %s must use tcp(host:port), not %q", EnvTestDSN, cfg.Net)
	}
	cfg.Timeout = 5 * time.Second
	where := cfg.User + "@" + cfg.Addr // never the password
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		tb.Fatalf("sqltest: %s: %v", EnvTestDSN, err)
	}
	root := sql.OpenDB(conn)
	tb.Cleanup(func() { _ = root.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := root.PingContext(ctx); err != nil {
		unavailable(tb, "sqltest: no MySQL-protocol server at %s (set %s to a reachable server's DSN, or run .ci/mariadb.sh): %v", where, EnvTestDSN, err)
	}

	backends := make([]*Backend, 0, len(names))
	for _, name := range names {
		db := uniqueDatabase(tb, name)
		// The character set is named: a server's default (latin1 for a mariadbd started
		// without a configuration file, utf8mb4 for Debian's) is not the tests' concern.
		if _, err := root.ExecContext(ctx, "CREATE DATABASE `"+db+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
			tb.Fatalf("sqltest: Shared %s: CREATE DATABASE %s on %s: %v", name, db, where, err)
		}
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := root.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
				tb.Errorf("sqltest: Shared %s: DROP DATABASE %s on %s: %v", name, db, where, err)
			}
		})
		b := &Backend{Name: name, kind: "shared", database: db, admin: newAdminConns(cfg.Addr)}
		b.connect(tb, cfg) // its handle is closed before the DROP
		backends = append(backends, b)
	}
	return backends
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// uniqueDatabase returns "sqltest_<test>_<name>_<random>", at most 64 bytes
// of [a-z0-9_].
func uniqueDatabase(tb testing.TB, name string) string {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		tb.Fatalf("sqltest: random database name: %v", err)
	}
	base := unsafeChars.ReplaceAllString(strings.ToLower(tb.Name()+"_"+name), "_")
	suffix := "_" + hex.EncodeToString(r[:])
	const prefix = "sqltest_"
	if max := 64 - len(prefix) - len(suffix); len(base) > max {
		base = base[len(base)-max:]
	}
	return fmt.Sprintf("%s%s%s", prefix, base, suffix)
}
