#!/usr/bin/env bash
# Runs sqlx's own test suite (the version in go.mod) against the test server twice, with driver
# name mysql and with obroute (a plain go-sql-driver DSN), and fails when a test fails through
# obroute or passes with mysql only.
#
# How: sqlx's tests open their MySQL handle with Connect("mysql", $SQLX_MYSQL_DSN) and pick
# MySQL's SQL dialect with db.DriverName() == "mysql". The module is copied from the module cache
# to a temporary directory, where both name the driver under test instead, and one extra test file
# imports obroute's driver. Its PostgreSQL and SQLite tests are switched off (SQLX_*_DSN=skip).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
source scripts/testdb.sh
source scripts/suite.sh
version=$(go list -m -f '{{.Version}}' github.com/jmoiron/sqlx)
src=$(go list -m -f '{{.Dir}}' github.com/jmoiron/sqlx)
work=$(mktemp -d)
trap 'test_dbs_drop; chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"
sed -i 's/Connect("mysql", mydsn)/Connect(sqlxMySQLDriver, mydsn)/; s/db\.DriverName() == "mysql"/db.DriverName() == sqlxMySQLDriver/' "$work"/*_test.go
if [ "$(grep -c 'sqlxMySQLDriver' "$work"/sqlx_test.go "$work"/sqlx_context_test.go | awk -F: '{s += $2} END {print s}')" -ne 5 ] ||
  grep -n 'DriverName() == "mysql"\|Connect("mysql"' "$work"/*_test.go; then
  echo "sqlx parity: the places where sqlx's tests name the mysql driver changed; update this script" >&2
  exit 1
fi
cat > "$work/zz_obroute_test.go" <<'GO'
package sqlx

import (
	"os"

	_ "github.com/obroute/obroute/driver" // registers "obroute"
)

// sqlxMySQLDriver is the driver name of the MySQL tests: SQLX_MYSQL_DRIVER, default mysql.
var sqlxMySQLDriver = func() string {
	if d := os.Getenv("SQLX_MYSQL_DRIVER"); d != "" {
		return d
	}
	return "mysql"
}()
GO
cd "$work"
suite_use_obroute "$repo" github.com/jmoiron/sqlx

test_db obroute_sqlxtest
suite_reset() { test_db obroute_sqlxtest; }
run() { # $1 = driver name
  SQLX_MYSQL_DRIVER=$1 SQLX_MYSQL_DSN="$TEST_USERINFO@tcp($TEST_ADDR)/obroute_sqlxtest?parseTime=true" \
    SQLX_POSTGRES_DSN=skip SQLX_SQLITE_DSN=skip run_suite "$work/$1.txt" 2m ""
}
echo "sqlx $version: its tests with driver name mysql, then obroute, against $TEST_ADDR"
run mysql
run obroute
echo "mysql:   $(suite_counts "$work/mysql.txt")"
echo "obroute: $(suite_counts "$work/obroute.txt")"
lost=$(suite_lost "$work/mysql.txt" "$work/obroute.txt" "")
bad=$(grep -E '^(FAIL|HANG)' "$work/obroute.txt" | awk '{print $2}' || true)
passed_mysql=$(grep -c '^PASS' "$work/mysql.txt" || true)
if [ -n "$lost$bad" ] || [ "$passed_mysql" -lt 30 ]; then
  echo "sqlx parity FAILED: failed through obroute, or passed with mysql only:"
  for t in $(printf '%s\n%s\n' "$lost" "$bad" | sort -u); do
    echo "  $t"
    suite_output "$work/obroute.txt.log" "$t"
  done
  exit 1
fi
echo "sqlx parity: every sqlx test passes through obroute"
