#!/usr/bin/env bash
# Runs go-sql-driver/mysql's own test suite twice against the test server, with driver name mysql
# and with obroute (a plain go-sql-driver DSN), and fails when a test that passes with mysql does
# not pass with obroute, apart from EXPECTED below.
#
# How: go-sql-driver's tests open their handles with sql.Open(driverNameTest, dsn), settable with
# -ldflags -X. The module is copied from the module cache to a temporary directory, where
#   - the handles its tests open with a hard-coded sql.Open("mysql", …) (runTestsParallel,
#     TestErrorInMultiResult) are made to use driverNameTest too, so every handle opened by
#     driver name goes through the driver under test;
#   - one extra *external* test file imports obroute's driver package: Go then links obroute
#     against the very mysql package under test, so error types (*MySQLError), registries (TLS,
#     dialers, LOAD DATA files) and driver values are the ones the tests check; it also checks
#     that the handles are obroute's.
# Tests that use go-sql-driver's Connector or MySQLDriver directly (NewConnector, md.Open) test
# go-sql-driver's own API, which no driver name changes; they run on go-sql-driver in both runs.
# A hang fails the test that hangs (see scripts/suite.sh), never the whole run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
source scripts/testdb.sh
source scripts/suite.sh
version=$(go list -m -f '{{.Version}}' github.com/go-sql-driver/mysql)
src=$(go list -m -f '{{.Dir}}' github.com/go-sql-driver/mysql)
work=$(mktemp -d)
trap 'test_dbs_drop; chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"
sed -i 's/sql\.Open("mysql", /sql.Open(driverNameTest, /' "$work"/*_test.go
if grep -n 'sql\.Open("mysql"' "$work"/*_test.go; then
  echo "parity: a handle is still opened with driver name mysql (above); patch it" >&2
  exit 1
fi
cat > "$work/zz_obroute_name_test.go" <<'GO'
package mysql

// DriverNameTest is the driver name the tests open their handles with, for the parity check.
func DriverNameTest() string { return driverNameTest }
GO
cat > "$work/zz_obroute_parity_test.go" <<'GO'
package mysql_test

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/obroute/obroute/connector"
	_ "github.com/obroute/obroute/driver" // registers "obroute" in go-sql-driver's test binary
)

// The handles of this run are the driver under test's: obroute's when it is the driver name.
func TestParityHandlesUseTheDriverUnderTest(t *testing.T) {
	db, err := sql.Open(mysql.DriverNameTest(), "root@tcp(127.0.0.1:1)/x")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = connector.FromDB(db)
	if isObroute := err == nil; isObroute != (mysql.DriverNameTest() == "obroute") {
		t.Fatalf("driver name %q, handle of obroute: %v", mysql.DriverNameTest(), isObroute)
	}
}
GO
cd "$work"
suite_use_obroute "$repo" github.com/go-sql-driver/mysql

test_db obroute_gotest
suite_reset() { test_db obroute_gotest; }
# Skipped in both runs: TestConnectorReturnsTimeout calls go-sql-driver's connector directly (no
# database/sql) and panics on this machine with plain go-sql-driver too.
SKIP='^TestConnectorReturnsTimeout$'
# Expected to pass with mysql only: they type-assert go-sql-driver's unexported *mysqlConn
# through (*sql.Conn).Raw, which no wrapping driver can be.
EXPECTED='TestPing|TestQueryMultipleResults'
run() { # $1 = driver name
  MYSQL_TEST_ADDR=$TEST_ADDR MYSQL_TEST_DBNAME=obroute_gotest MYSQL_TEST_USER=$TEST_USER MYSQL_TEST_PASS=$TEST_PASS \
    run_suite "$work/$1.txt" 2m "$SKIP" -ldflags "-X github.com/go-sql-driver/mysql.driverNameTest=$1"
}
echo "go-sql-driver/mysql $version: its tests with driver name mysql, then obroute, against $TEST_ADDR"
run mysql
run obroute
echo "mysql:   $(suite_counts "$work/mysql.txt") (failures are this machine's: no TLS, socket auth …)"
echo "obroute: $(suite_counts "$work/obroute.txt")"
grep -v '^PASS' "$work/obroute.txt" | sort | sed 's/^/  obroute /' || true
lost=$(suite_lost "$work/mysql.txt" "$work/obroute.txt" "$EXPECTED")
passed_mysql=$(grep -c '^PASS' "$work/mysql.txt" || true)
if [ -n "$lost" ] || [ "$passed_mysql" -lt 100 ]; then
  echo "parity FAILED: passed with mysql but not with obroute:"
  echo "$lost" | sed 's/^/  /'
  for t in $lost; do # the output of each, from the obroute run
    suite_output "$work/obroute.txt.log" "$t"
  done
  exit 1
fi
echo "parity: every go-sql-driver test that passes with mysql passes with obroute (apart from ${EXPECTED//|/, }: *mysqlConn through Raw)"
