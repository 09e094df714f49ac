#!/usr/bin/env bash
# Finds or starts the MariaDB server the tests share, and prints its go-sql-driver DSN on stdout
# (for OBROUTE_TEST_DSN); messages go to stderr. It never changes an existing server: no user,
# password, variable or service of it is touched.
#
#   1. OBROUTE_TEST_DSN, when set and accepted: that server.
#   2. A server on 127.0.0.1:3306 that accepts root without a password: that one.
#   3. Otherwise its own mariadbd, with its own data directory, on 3306 when that port is free,
#      else on OBROUTE_CI_PORT (default 3316); MariaDB is installed with apt-get when missing.
#      A second run finds it again.
set -euo pipefail

HOST=127.0.0.1
SHARED_PORT=${OBROUTE_CI_SHARED_PORT:-3306} # overridable to test this script beside a server
OWN_PORT=${OBROUTE_CI_PORT:-3316}
DATADIR_BASE=${OBROUTE_CI_DATADIR:-/var/tmp/obroute-ci-mariadb}

say() { echo "mariadb.sh: $*" >&2; }

# install: MariaDB's server and client, with apt-get.
install() {
	local sudo_cmd=()
	[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
	say "installing mariadb-server"
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq mariadb-server mariadb-client >/dev/null
}

# accepts USER PASSWORD HOST PORT: the server there accepts that login over TCP.
accepts() {
	MYSQL_PWD="$2" mariadb --protocol=tcp -u"$1" -h"$3" -P"$4" --connect-timeout=3 -e 'SELECT 1' >/dev/null 2>&1
}

# listening PORT: something accepts TCP connections on HOST:PORT.
listening() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

command -v mariadb >/dev/null 2>&1 || install

if [ -n "${OBROUTE_TEST_DSN:-}" ]; then
	re='^([^:@]*)(:([^@]*))?@tcp\(([^:)]+):([0-9]+)\)/'
	if [[ $OBROUTE_TEST_DSN =~ $re ]] && accepts "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}" "${BASH_REMATCH[5]}"; then
		echo "$OBROUTE_TEST_DSN"
		exit 0
	fi
	say "OBROUTE_TEST_DSN is set but its server does not accept that login (want user[:password]@tcp(host:port)/)"
	exit 1
fi

if accepts root "" "$HOST" "$SHARED_PORT"; then
	echo "root@tcp($HOST:$SHARED_PORT)/"
	exit 0
fi

port=$SHARED_PORT
if listening "$SHARED_PORT"; then
	port=$OWN_PORT
	say "the server on $HOST:$SHARED_PORT does not accept root without a password; it is left as it is, and the tests get a MariaDB of their own on port $port"
fi
if accepts root "" "$HOST" "$port"; then # ours, from an earlier run
	echo "root@tcp($HOST:$port)/"
	exit 0
fi
if listening "$port"; then
	say "port $port is taken by something that does not accept root without a password; set OBROUTE_CI_PORT to a free port"
	exit 1
fi

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
	install
	if accepts root "" "$HOST" "$port"; then # the package started a server that accepts us
		echo "root@tcp($HOST:$port)/"
		exit 0
	fi
	if [ "$port" = "$SHARED_PORT" ] && listening "$port"; then # the package's own server: leave it alone
		port=$OWN_PORT
	fi
fi
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)

datadir=$DATADIR_BASE-$port
user_args=()
[ "$(id -u)" -eq 0 ] && user_args=(--user=root)
if [ ! -d "$datadir/data/mysql" ]; then
	mkdir -p "$datadir"
	mariadb-install-db --no-defaults --datadir="$datadir/data" "${user_args[@]}" \
		--auth-root-authentication-method=normal --skip-test-db >"$datadir/install.log" 2>&1 ||
		{ cat "$datadir/install.log" >&2; exit 1; }
fi
say "starting its own MariaDB on $HOST:$port (data in $datadir)"
nohup "$MARIADBD" --no-defaults --datadir="$datadir/data" "${user_args[@]}" \
	--bind-address="$HOST" --port="$port" \
	--socket="$datadir/mariadb.sock" --pid-file="$datadir/mariadbd.pid" \
	--log-error="$datadir/error.log" --skip-log-bin \
	>/dev/null 2>&1 &
for _ in $(seq 1 60); do
	if accepts root "" "$HOST" "$port"; then
		echo "root@tcp($HOST:$port)/"
		exit 0
	fi
	sleep 0.5
done
say "MariaDB did not answer on $HOST:$port within 30s"
tail -n 30 "$datadir/error.log" >&2 || true
exit 1
