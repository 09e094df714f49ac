# Sourced by the scripts that run other projects' test suites: the shared test server, from
# OBROUTE_TEST_DSN (as .ci/mariadb.sh prints it; default root@tcp(127.0.0.1:3306)/), as
# TEST_USER, TEST_PASS, TEST_HOST, TEST_PORT, TEST_ADDR; test_db NAME (re)creates a database of
# the script's own, test_dbs_drop drops them, test_sql runs a statement.
TEST_DSN=${OBROUTE_TEST_DSN:-root@tcp(127.0.0.1:3306)/}
_re='^([^:@]*)(:([^@]*))?@tcp\(([^:)]+):([0-9]+)\)/'
if ! [[ $TEST_DSN =~ $_re ]]; then
  echo "OBROUTE_TEST_DSN must look like user[:password]@tcp(host:port)/" >&2
  exit 1
fi
TEST_USER=${BASH_REMATCH[1]}
TEST_PASS=${BASH_REMATCH[3]}
TEST_HOST=${BASH_REMATCH[4]}
TEST_PORT=${BASH_REMATCH[5]}
TEST_ADDR=$TEST_HOST:$TEST_PORT
TEST_USERINFO=$TEST_USER${TEST_PASS:+:$TEST_PASS}

# test_db NAME: an empty database NAME on the test server, dropped again when the script exits.
# Use names of obroute's own (obroute_…): the server may be a developer's.
test_db() {
  MYSQL_PWD=$TEST_PASS mariadb --protocol=tcp -u"$TEST_USER" -h"$TEST_HOST" -P"$TEST_PORT" \
    -e "DROP DATABASE IF EXISTS \`$1\`; CREATE DATABASE \`$1\`"
  case " $TEST_DBS " in *" $1 "*) ;; *) TEST_DBS="$TEST_DBS $1" ;; esac
}
TEST_DBS=""

# test_dbs_drop: drops the databases test_db created (call it from the script's EXIT trap).
test_dbs_drop() {
  local db
  for db in $TEST_DBS; do
    MYSQL_PWD=$TEST_PASS mariadb --protocol=tcp -u"$TEST_USER" -h"$TEST_HOST" -P"$TEST_PORT" \
      -e "DROP DATABASE IF EXISTS \`$db\`" || true
  done
}

# test_sql DB SQL: runs SQL in database DB on the test server, tab-separated output.
test_sql() {
  MYSQL_PWD=$TEST_PASS mariadb --protocol=tcp -u"$TEST_USER" -h"$TEST_HOST" -P"$TEST_PORT" -N -B "$1" -e "$2"
}
