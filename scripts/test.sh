#!/usr/bin/env bash
# The test command of README.md: finds or starts the MariaDB the tests share (.ci/mariadb.sh, which
# never changes an existing server), then runs every check, each step timed:
#   gofmt and go vet; go test -race ./... (package by package as each finishes, through
#   internal/testprogress); GORM's Migrator on time-sharded tables (internal/gormtest); the test suites of go-sql-driver, sqlx and GORM through obroute; the
#   overhead benchmarks in short mode.
# Every step runs even when an earlier one failed; the summary lists each step's result and time,
# and the command fails when any step failed. Tests that need a real MariaDB fail (not skip) here.
set -uo pipefail
cd "$(dirname "$0")/.."
export OBROUTE_REQUIRE_SERVERS=1 # a missing server is a failure, never a skip
# The differential tests draw a random seed when none is given; CI replays a fixed one so that
# a landing never depends on luck. Run them with OBROUTE_DIFF_SEED unset to explore.
export OBROUTE_DIFF_SEED=${OBROUTE_DIFF_SEED:-20261130}

summary=()
failed=0
total_start=$SECONDS
step() { # step NAME COMMAND…: runs one step, timed
  local name=$1 start=$SECONDS
  shift
  echo
  echo "=== $name"
  if "$@"; then
    summary+=("ok    $(printf '%5ds' $((SECONDS - start)))  $name")
  else
    summary+=("FAIL  $(printf '%5ds' $((SECONDS - start)))  $name")
    failed=1
  fi
}

mariadb_setup() {
  OBROUTE_TEST_DSN=$(bash .ci/mariadb.sh) || return 1
  export OBROUTE_TEST_DSN
  echo "test server: ${OBROUTE_TEST_DSN/:*@/:***@}"
}
formatting() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  [ -z "$unformatted" ] || { echo "gofmt needed: $unformatted"; return 1; }
  go vet ./...
}
unit_tests() {
  go test -race -count=1 -timeout 25m -json ./... | go run ./internal/testprogress
}
gorm_migrator() { # a module of its own, so that GORM stays out of obroute's go.mod
  (cd internal/gormtest && go vet ./... && go test -race -count=1 ./...)
}
benchmarks() { # a few iterations: they must run, figures are not judged
  go run ./internal/bench/cmd/report -short && go test -run '^$' -bench . -benchtime 20x -benchmem ./internal/bench/
}

step "MariaDB (.ci/mariadb.sh)" mariadb_setup
if [ "$failed" -ne 0 ]; then
  echo "no test server: nothing else can run"
  exit 1
fi
step "gofmt, go vet" formatting
step "go test -race ./..." unit_tests
step "GORM's Migrator on time-sharded tables (internal/gormtest)" gorm_migrator
step "go-sql-driver's suite through obroute (scripts/mysql-parity.sh)" bash scripts/mysql-parity.sh
step "sqlx's suite through obroute (scripts/sqlx-parity.sh)" bash scripts/sqlx-parity.sh
step "GORM's suite through obroute (scripts/gorm-parity.sh)" bash scripts/gorm-parity.sh
step "benchmarks, short mode" benchmarks

echo
echo "=== summary ($((SECONDS - total_start))s in all)"
printf '%s\n' "${summary[@]}"
exit "$failed"
