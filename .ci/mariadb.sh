#!/usr/bin/env bash
# Ensure a MariaDB server answers on 127.0.0.1:3306 (root, empty password)
# with a database `test`, for tests using sqltest.Shared (OBROUTE_TEST_DSN's
# default). Installs and starts MariaDB when needed. Idempotent; prints
# nothing when the server is already up.
set -euo pipefail

HOST=127.0.0.1
PORT=${OBROUTE_CI_PORT:-3306}
# Overridable for testing this script beside a running server.
DATADIR=${OBROUTE_CI_DATADIR:-/var/tmp/obroute-ci-mariadb}

ping_server() {
	mariadb --protocol=tcp -h"$HOST" -P"$PORT" -uroot -e 'SELECT 1' >/dev/null 2>&1
}

ensure_test_db() {
	mariadb --protocol=tcp -h"$HOST" -P"$PORT" -uroot -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null
}

wait_up() {
	for _ in $(seq 1 60); do
		ping_server && return 0
		sleep 0.5
	done
	echo "mariadb.sh: MariaDB did not answer on $HOST:$PORT within 30s" >&2
	[ -f "$DATADIR/error.log" ] && tail -n 30 "$DATADIR/error.log" >&2
	return 1
}

if command -v mariadb >/dev/null 2>&1 && ping_server; then
	ensure_test_db
	exit 0
fi

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
	echo "mariadb.sh: installing mariadb-server" >&2
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq mariadb-server >/dev/null
fi
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)

echo "mariadb.sh: starting MariaDB on $HOST:$PORT" >&2
started=0
# The packaged service (which listens on 3306) first: its root may use unix_socket auth, so give
# root@localhost an empty password afterwards.
if [ "$PORT" = 3306 ] && command -v service >/dev/null 2>&1 && "${sudo_cmd[@]}" service mariadb start >/dev/null 2>&1; then
	for _ in $(seq 1 60); do
		"${sudo_cmd[@]}" mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
		sleep 0.5
	done
	"${sudo_cmd[@]}" mariadb -uroot -e \
		"ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket; FLUSH PRIVILEGES" \
		>/dev/null 2>&1 || true
	ping_server && started=1
fi

if [ "$started" -eq 0 ]; then
	# No service manager (containers): run mariadbd ourselves.
	user_args=()
	[ "$(id -u)" -eq 0 ] && user_args=(--user=root)
	if [ ! -d "$DATADIR/data/mysql" ]; then
		mkdir -p "$DATADIR"
		mariadb-install-db --no-defaults --datadir="$DATADIR/data" "${user_args[@]}" \
			--auth-root-authentication-method=normal --skip-test-db >"$DATADIR/install.log" 2>&1 ||
			{ cat "$DATADIR/install.log" >&2; exit 1; }
	fi
	nohup "$MARIADBD" --no-defaults --datadir="$DATADIR/data" "${user_args[@]}" \
		--bind-address="$HOST" --port="$PORT" \
		--socket="$DATADIR/mariadb.sock" --pid-file="$DATADIR/mariadbd.pid" \
		--log-error="$DATADIR/error.log" --skip-log-bin \
		>/dev/null 2>&1 &
fi

wait_up
ensure_test_db
