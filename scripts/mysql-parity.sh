#!/usr/bin/env bash
# Runs go-sql-driver/mysql's own database/sql behaviour tests with the driver name "obroute"
# and a plain go-sql-driver DSN (Done-when 8 of the driver issue).
#
# How: go-sql-driver's tests open their handles with sql.Open(driverNameTest, dsn), and
# driverNameTest is settable with -ldflags -X for exactly this purpose. The module is copied
# from the module cache to a temporary directory and given one extra *external* test file that
# imports obroute's driver package; Go then links obroute against the very mysql package under
# test, so error types (*MySQLError), registries (TLS, dialers, LOAD DATA files) and driver
# values are the ones the tests check.
#
# Tests that reach into go-sql-driver's unexported connection internals through (*sql.Conn).Raw
# cannot pass through any wrapping driver and are listed in SKIP with the reason.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
version=$(go list -m -f '{{.Version}}' github.com/go-sql-driver/mysql)
src=$(go list -m -f '{{.Dir}}' github.com/go-sql-driver/mysql)
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"
cat > "$work/zz_obroute_parity_test.go" <<'GO'
package mysql_test

// Registers the "obroute" driver in go-sql-driver's test binary.
import _ "github.com/obroute/obroute/driver"
GO
cd "$work"
go mod edit -require=github.com/obroute/obroute@v0.0.0 -replace=github.com/obroute/obroute="$repo"
# obroute's own requirements decide the versions of shared dependencies.
go mod edit $(cd "$repo" && go list -m -f '{{if not .Main}}-require={{.Path}}@{{.Version}}{{end}}' all | grep -v '^-require=github.com/go-sql-driver/mysql@' | tr '\n' ' ')
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go mod download all >/dev/null

host=${MYSQL_TEST_ADDR:-127.0.0.1:3306}
mariadb -uroot -h"${host%:*}" -P"${host#*:}" -e 'CREATE DATABASE IF NOT EXISTS gotest' 2>/dev/null || true

# Skipped in both runs:
# - TestPing, TestQueryMultipleResults type-assert go-sql-driver's unexported *mysqlConn through
#   (*sql.Conn).Raw: they test go-sql-driver's internals, which no wrapping driver can expose.
# - TestConnectorReturnsTimeout calls go-sql-driver's connector directly (no database/sql) and
#   panics on this machine with the plain driver too.
SKIP='TestConnectorReturnsTimeout|TestPing$|TestQueryMultipleResults'
run() { # $1 = driver name
  MYSQL_TEST_ADDR=$host MYSQL_TEST_DBNAME=gotest MYSQL_TEST_USER=root MYSQL_TEST_PASS= \
    go test -count=1 -v -ldflags "-X github.com/go-sql-driver/mysql.driverNameTest=$1" -skip "$SKIP" . 2>&1 |
    grep -E '^--- (PASS|FAIL)' | awk '{print $2, $3}' | sort -k2 || true
}
echo "go-sql-driver/mysql $version: its tests with driver name mysql, then obroute, against $host"
run mysql > "$work/mysql.txt"
run obroute > "$work/obroute.txt"
passed_mysql=$(grep -c '^PASS:' "$work/mysql.txt" || true)
passed_obroute=$(grep -c '^PASS:' "$work/obroute.txt" || true)
echo "mysql:   $passed_mysql passed, $(grep -c '^FAIL:' "$work/mysql.txt" || true) failed (failures are this machine's: no TLS, socket auth …)"
echo "obroute: $passed_obroute passed, $(grep -c '^FAIL:' "$work/obroute.txt" || true) failed"
missing=$(comm -23 <(grep '^PASS:' "$work/mysql.txt" | awk '{print $2}') <(grep '^PASS:' "$work/obroute.txt" | awk '{print $2}'))
if [ -n "$missing" ] || [ "$passed_mysql" -lt 100 ]; then
  echo "parity FAILED: passed with mysql but not with obroute:"; echo "$missing"
  exit 1
fi
echo "parity: every go-sql-driver test that passes with mysql passes with obroute"
