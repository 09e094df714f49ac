#!/usr/bin/env bash
# The test command of README.md: sets up what the tests need on a fresh machine, then runs
# every test with the race detector. Tests that need a real MariaDB fail (not skip) here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/mariadb.sh                       # MariaDB on 127.0.0.1:3306 (installed if missing)
export OBROUTE_REQUIRE_SERVERS=1          # a missing server is a failure, never a skip
# The differential tests draw a random seed when none is given; CI replays a fixed one so that
# a landing never depends on luck. Run them with OBROUTE_DIFF_SEED unset to explore.
export OBROUTE_DIFF_SEED=${OBROUTE_DIFF_SEED:-20261130}
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted"; exit 1; fi
go vet ./...
go test -race -count=1 -timeout 25m ./...
bash scripts/mysql-parity.sh              # go-sql-driver's own tests with driver name obroute
# The overhead benchmarks in short mode (a few iterations: they must run, figures are not judged).
go test -run '^$' -bench . -benchtime 20x -benchmem ./bench/ | go run ./bench/cmd/report
