package connector_test

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/obroute/obroute/connector"

	"github.com/obroute/obroute/sqltest"
)

// attackServer is oneServer with two more tables, each with an AUTO_INCREMENT key: ai_cold,
// routed to cold, and ai_hot, on the default backend.
type attackServer struct{ *oneServer }

var attackHomes = map[string]string{"items": "hot", "audit_log": "cold", "ai_hot": "hot", "ai_cold": "cold"}

func newAttackServer(t *testing.T, isolated bool) *attackServer {
	t.Helper()
	var bs []*sqltest.Backend
	if isolated {
		bs = sqltest.MariaDB(t, "hot", "cold", "one")
	} else {
		bs = sqltest.Shared(t, "hot", "cold", "one")
	}
	o := &oneServer{hot: bs[0], cold: bs[1], one: bs[2]}
	for _, b := range bs {
		for _, table := range oneServerTables {
			b.Exec(t, "CREATE TABLE "+table+" (id INT PRIMARY KEY, note VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)")
		}
		for _, table := range []string{"ai_hot", "ai_cold"} {
			b.Exec(t, "CREATE TABLE "+table+" (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)")
		}
	}
	var err error
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;routes.audit_log=cold;routes.ai_cold=cold", o.hot.DSN, o.cold.DSN)
	if o.db, err = sql.Open("obroute", dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.db.Close() })
	if o.ref, err = sql.Open("mysql", o.one.DSN); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.ref.Close() })
	o.db.SetMaxIdleConns(0)
	o.ref.SetMaxIdleConns(0)
	return &attackServer{o}
}

func (a *attackServer) placement(t *testing.T) {
	t.Helper()
	for table, home := range attackHomes {
		h, other := a.hot, a.cold
		if home == "cold" {
			h, other = a.cold, a.hot
		}
		want := tableRows(t, a.one, table)
		if got := tableRows(t, h, table); !slices.Equal(got, want) {
			t.Errorf("%s on backend %s: %v; the one server holds %v", table, h.Name, got, want)
		}
		if got := tableRows(t, other, table); len(got) > 0 {
			t.Errorf("%s on backend %s, which is not its backend: %v", table, other.Name, got)
		}
	}
}

func TestSessionStateAttacks(t *testing.T) {
	a := newAttackServer(t, false)
	for _, tc := range []struct{ name, script string }{
		{"mixed set", `
			SET @a = 1, time_zone = '+03:00', @b = @@time_zone, @c = 'x'
			SELECT @a, @b, @c, @@time_zone FROM audit_log
			SELECT @a, @b, @c, @@time_zone FROM items`},
		{"local and session spellings", `
			SET LOCAL time_zone = '+02:00'
			SELECT @@time_zone FROM audit_log
			SET @@local.time_zone = '+04:00'
			SELECT @@time_zone FROM audit_log
			SET @@session.time_zone = '+05:00'
			SELECT @@time_zone FROM audit_log
			SET SESSION time_zone = DEFAULT
			SELECT @@time_zone FROM audit_log
			SELECT @@time_zone FROM items`},
		{"default after cold", `
			SELECT @@time_zone FROM audit_log
			SET time_zone = '+01:00'
			SET time_zone = DEFAULT
			SELECT @@time_zone FROM audit_log
			SELECT @@time_zone`},
		{"user var types", `
			SET @i = 10, @f = 1e0, @d = 1.50, @s = 'str', @x = 0x41, @n = NULL, @b = b'1'
			SELECT @i, @f, @d, @s, @x, @n, @b, @i + 1, @d * 2 FROM audit_log
			SELECT @i, @f, @d, @s, @x, @n, @b FROM items`},
		{"user var null after value", `
			SET @a = 5
			SELECT @a FROM audit_log
			SET @a = NULL
			SELECT @a FROM audit_log
			SELECT @a FROM items`},
		{"set transaction read only then autocommit write", `
			SET TRANSACTION READ ONLY
			INSERT INTO audit_log VALUES (4, 'a')
			INSERT INTO audit_log VALUES (5, 'b')`},
		{"set transaction inside transaction", `
			BEGIN
			!state SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
			INSERT INTO audit_log VALUES (6, 'a')
			SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
			COMMIT
			SET autocommit = 0
			SET TRANSACTION READ ONLY
			INSERT INTO audit_log VALUES (7, 'read only')
			ROLLBACK
			SET autocommit = 1`},
		{"start transaction read only", `
			START TRANSACTION READ ONLY
			INSERT INTO audit_log VALUES (8, 'a')
			COMMIT
			!state START TRANSACTION READ WRITE, WITH CONSISTENT SNAPSHOT
			INSERT INTO audit_log VALUES (9, 'a')
			ROLLBACK
			BEGIN WORK
			INSERT INTO audit_log VALUES (10, 'a')
			ROLLBACK WORK
			SELECT id FROM audit_log ORDER BY id`},
		{"unrouted table in cold transaction", `
			BEGIN
			INSERT INTO audit_log VALUES (14, 'cold')
			!tx INSERT INTO items VALUES (14, 'hot table in cold tx')
			!tx SELECT COUNT(*) FROM items
			SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()
			CREATE TEMPORARY TABLE scratch (a INT)
			INSERT INTO scratch VALUES (1)
			COMMIT
			INSERT INTO items VALUES (14, 'after the transaction')
			SET autocommit = 0
			INSERT INTO audit_log VALUES (15, 'implicit transaction on cold')
			!tx UPDATE items SET note = 'x'
			ROLLBACK
			SET autocommit = 1`},
		{"unrouted table after a pin", `
			/*+ OBROUTE(backend=cold) */ CREATE PROCEDURE noop(x INT) SELECT x
			CALL noop((SELECT COUNT(*) FROM audit_log))
			!state INSERT INTO items VALUES (30, 'pinned to cold')
			SELECT COUNT(*) FROM audit_log
			DROP PROCEDURE noop`},
		{"last_insert_id routed", `
			INSERT INTO ai_cold (note) VALUES ('a')
			SELECT LAST_INSERT_ID()
			SELECT @@identity, @@last_insert_id
			SELECT LAST_INSERT_ID() FROM items
			INSERT INTO ai_hot (note) VALUES ('b'), ('c')
			SELECT LAST_INSERT_ID(), @@identity, @@last_insert_id`},
		{"last_insert_id expr", `
			SELECT LAST_INSERT_ID(42)
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM audit_log
			INSERT INTO ai_cold (note) VALUES ('d')
			UPDATE ai_cold SET note = 'e' WHERE id = LAST_INSERT_ID(id)
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM items`},
		{"insert_id", `
			!state SET insert_id = 100
			!state SET @@session.INSERT_ID = 100, @a = 1
			SET STATEMENT insert_id = 100 FOR INSERT INTO ai_cold (note) VALUES ('with insert_id')
			INSERT INTO ai_hot (note) VALUES ('after, auto')
			SELECT id, note FROM ai_hot
			SELECT id, note FROM ai_cold`},
		{"last_insert_id var", `
			SET last_insert_id = 77
			SELECT LAST_INSERT_ID() FROM audit_log
			SELECT LAST_INSERT_ID()`},
		{"select into then other backend", `
			INSERT INTO audit_log VALUES (15, 'from cold')
			SELECT note FROM audit_log WHERE id = 15 INTO @v
			INSERT INTO items VALUES (15, @v)
			SELECT @v`},
		{"prepare from var", `
			SET @q = 'INSERT INTO audit_log VALUES (?, ?)'
			PREPARE s FROM @q
			SET @a = 16, @b = 'prepared from var'
			EXECUTE s USING @a, @b
			DEALLOCATE PREPARE s
			EXECUTE s USING @a, @b`},
		{"prepare again failing", `
			PREPARE s FROM 'SELECT COUNT(*) FROM audit_log'
			EXECUTE s
			PREPARE s FROM 'SELEC bad'
			EXECUTE s`},
		{"prepare name case", `
			PREPARE S1 FROM 'SELECT COUNT(*) FROM audit_log'
			EXECUTE s1
			DEALLOCATE PREPARE s1
			EXECUTE S1`},
		{"prepare replace on other backend", `
			PREPARE s FROM 'SELECT COUNT(*) FROM audit_log'
			PREPARE s FROM 'SELECT COUNT(*) FROM items'
			EXECUTE s
			DROP PREPARE s
			EXECUTE s`},
		{"prepared set", `
			PREPARE s FROM 'SET time_zone = ''+03:00'''
			EXECUTE s
			SELECT @@time_zone FROM audit_log
			SELECT @@time_zone FROM items`},
		{"prepared select into", `
			PREPARE s FROM 'SELECT 7 INTO @pv'
			EXECUTE s
			SELECT @pv FROM audit_log
			SELECT @pv FROM items`},
		{"execute immediate using", `
			EXECUTE IMMEDIATE 'SELECT ? + 1 FROM audit_log' USING 5
			EXECUTE IMMEDIATE 'SELECT 8 INTO @iv'
			SELECT @iv FROM audit_log`},
		{"show warnings after cold", `
			SELECT CAST('abc' AS INT) FROM audit_log
			INSERT INTO audit_log VALUES (17, 'w')
			SELECT CAST('abc' AS INT), CAST('x' AS INT) FROM audit_log
			SHOW WARNINGS
			SHOW WARNINGS LIMIT 1, 1
			SHOW COUNT(*) WARNINGS
			SHOW COUNT(*) ERRORS
			SELECT @@warning_count, @@error_count`},
		{"get diagnostics", `
			INSERT INTO audit_log VALUES (18, 'w')
			SELECT CAST('abc' AS INT) FROM audit_log
			GET DIAGNOSTICS @n = NUMBER
			SELECT @n
			SELECT CAST('abc' AS INT) FROM audit_log
			GET DIAGNOSTICS CONDITION 1 @c = MESSAGE_TEXT, @e = MYSQL_ERRNO
			SELECT @c, @e FROM items`},
		{"unsigned user variable", `
			SELECT CAST(5 AS UNSIGNED) INTO @u
			SET @w = CAST(6 AS UNSIGNED), @x = 18446744073709551615
			SELECT @u, @w, @x FROM audit_log
			SELECT @u - 6 FROM audit_log`},
		{"session flags", `
			SET foreign_key_checks = 0, unique_checks = 0, sql_log_bin = 0
			SELECT @@foreign_key_checks, @@unique_checks, @@sql_log_bin FROM audit_log
			SET foreign_key_checks = DEFAULT, unique_checks = DEFAULT, sql_log_bin = DEFAULT
			SELECT @@foreign_key_checks, @@unique_checks, @@sql_log_bin FROM audit_log
			SELECT @@foreign_key_checks, @@unique_checks, @@sql_log_bin FROM items`},
		{"rand seed", `
			!state SET rand_seed1 = 1, rand_seed2 = 2
			SET STATEMENT rand_seed1 = 1, rand_seed2 = 2 FOR SELECT RAND() FROM ai_hot
			SET STATEMENT rand_seed1 = 3, rand_seed2 = 4 FOR SELECT RAND() FROM ai_cold`},
		{"names collate", `
			SET NAMES utf8mb4 COLLATE utf8mb4_bin
			INSERT INTO audit_log VALUES (19, 'a')
			SELECT COUNT(*) FROM audit_log WHERE 'a' = 'A'
			SELECT @@collation_connection FROM audit_log
			SET NAMES DEFAULT
			SELECT @@collation_connection, @@character_set_client FROM audit_log
			SELECT @@collation_connection, @@character_set_client`},
		{"charset results null", `
			SET character_set_results = NULL
			SELECT @@character_set_results FROM audit_log
			SET character_set_results = DEFAULT
			SELECT @@character_set_results FROM audit_log`},
		{"sql_select_limit", `
			INSERT INTO audit_log VALUES (20, 'a'), (21, 'b')
			SET sql_select_limit = 1
			SELECT id FROM audit_log ORDER BY id
			SET sql_select_limit = DEFAULT
			SELECT id FROM audit_log ORDER BY id`},
		{"lock alias", `
			LOCK TABLES audit_log AS a WRITE
			SELECT COUNT(*) FROM audit_log AS a
			SELECT COUNT(*) FROM audit_log
			UNLOCK TABLES`},
		{"lock then tableless", `
			LOCK TABLES audit_log READ
			SELECT 1
			SELECT @@time_zone
			UNLOCK TABLES`},
		{"savepoint after split", `
			BEGIN
			INSERT INTO audit_log VALUES (22, 'a')
			SAVEPOINT s1
			INSERT INTO audit_log VALUES (23, 'b'), (24, 'c')
			ROLLBACK TO SAVEPOINT s1
			RELEASE SAVEPOINT s1
			ROLLBACK TO s1
			COMMIT`},
		{"create procedure writing routed", `
			!state CREATE PROCEDURE wr() INSERT INTO audit_log VALUES (25, 'from procedure')
			!state CREATE PROCEDURE wr() BEGIN SELECT 1; INSERT INTO audit_log VALUES (25, 'from procedure'); END
			!state CREATE TRIGGER tr AFTER INSERT ON items FOR EACH ROW INSERT INTO audit_log VALUES (NEW.id, 'from trigger')
			!state CREATE FUNCTION f() RETURNS INT RETURN (SELECT COUNT(*) FROM audit_log)
			!state CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DO DELETE FROM audit_log
			/*+ OBROUTE(backend=cold) */ CREATE PROCEDURE wr() INSERT INTO audit_log VALUES (25, 'from procedure')
			/*+ OBROUTE(backend=cold) */ CALL wr()
			DROP PROCEDURE wr
			/*+ OBROUTE(backend=cold) */ CREATE TRIGGER tr AFTER INSERT ON audit_log FOR EACH ROW SET @fired = NEW.id
			INSERT INTO audit_log VALUES (26, 'fires the trigger')
			/*+ OBROUTE(backend=cold) */ DROP TRIGGER tr`},
		{"ddl in tx", `
			BEGIN
			INSERT INTO audit_log VALUES (26, 'a')
			CREATE TABLE made_here (a INT)
			ROLLBACK
			DROP TABLE made_here`},
		{"autocommit on commits", `
			BEGIN
			INSERT INTO audit_log VALUES (27, 'a')
			SET autocommit = 1
			ROLLBACK`},
		{"set statement for var read", `
			SET STATEMENT time_zone = '+05:00' FOR SELECT @@time_zone FROM audit_log
			SELECT @@time_zone FROM audit_log`},
		{"execute immediate set then other", `
			EXECUTE IMMEDIATE 'SET time_zone = ''+07:00'''
			SELECT @@time_zone FROM audit_log
			SET @tz = 'SET time_zone = ''+08:00'''
			EXECUTE IMMEDIATE @tz
			SELECT @@time_zone FROM audit_log`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.pair(t)
			for _, tbl := range []string{"items", "audit_log", "ai_hot", "ai_cold"} {
				for _, b := range []*sqltest.Backend{a.hot, a.cold, a.one} {
					b.Exec(t, "DELETE FROM "+tbl)
				}
			}
			// One row in each table, so that a SELECT … FROM it answers a row whose columns
			// are compared.
			for tbl, home := range attackHomes {
				for _, b := range []*sqltest.Backend{a.hot, a.cold, a.one} {
					if b == a.one || b.Name == home {
						b.Exec(t, "INSERT INTO "+tbl+" VALUES (1000, 'seed')")
					}
				}
			}
			p.steps(tc.script, refusals)
			a.placement(t)
		})
	}
}

// User-level locks taken while table locks pin the client session to another backend are still
// in the one namespace of the default backend, where every client session takes them.
func TestUserLevelLocksUnderTableLocks(t *testing.T) {
	a := newAttackServer(t, true)
	p, q := a.pair(t), a.pair(t)
	p.both("LOCK TABLES audit_log WRITE")
	p.both("SELECT GET_LOCK('al', 0)")
	q.both("SELECT GET_LOCK('al', 0), IS_FREE_LOCK('al'), IS_USED_LOCK('al') IS NOT NULL")
	p.both("SELECT RELEASE_LOCK('al')")
	p.both("UNLOCK TABLES")
	q.both("SELECT GET_LOCK('al', 0)")
}

// START TRANSACTION WITH CONSISTENT SNAPSHOT reads as of the START: a row another client session
// commits after it is not seen, as on one server.
func TestConsistentSnapshotAttack(t *testing.T) {
	a := newAttackServer(t, false)
	p, q := a.pair(t), a.pair(t)
	p.refused("START TRANSACTION WITH CONSISTENT SNAPSHOT", connector.ErrSessionState)
	p.refused("START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", connector.ErrSessionState)
	p.refused("/*+ OBROUTE(backend=cold) */ START TRANSACTION WITH CONSISTENT SNAPSHOT", connector.ErrSessionState)
	// Without it the snapshot is taken at the first read, on one server as through obroute.
	q.both("INSERT INTO audit_log VALUES (1, 'committed after the snapshot')")
	p.both("START TRANSACTION")
	p.both("SELECT COUNT(*) FROM audit_log")
	q.both("INSERT INTO audit_log VALUES (2, 'committed after the first read')")
	p.both("SELECT COUNT(*) FROM audit_log")
	p.both("COMMIT")
}

// FLUSH TABLE[S] … WITH READ LOCK and FOR EXPORT take their locks in each spelling the server
// reads (NO_WRITE_TO_BINLOG or LOCAL, TABLE or TABLES, AND DISABLE CHECKPOINT): obroute holds
// the client session on the backend of the tables, UNLOCK TABLES releases the locks there, and
// the form without tables, a lock of each server, needs a backend hint, as FLUSH TABLES WITH
// READ LOCK does. (Own servers: without the fix the last would lock a whole server.)
func TestFlushTableLockSpellings(t *testing.T) {
	o := newOneServer(t, true, "")
	for _, q := range []string{
		"FLUSH TABLES audit_log WITH READ LOCK",
		"FLUSH LOCAL TABLES audit_log WITH READ LOCK",
		"flush local table audit_log with read lock",
		"FLUSH NO_WRITE_TO_BINLOG TABLES audit_log WITH READ LOCK",
		"FLUSH NO_WRITE_TO_BINLOG TABLE audit_log FOR EXPORT",
		"FLUSH LOCAL TABLES audit_log FOR EXPORT",
		"FLUSH TABLE audit_log WITH READ LOCK AND DISABLE CHECKPOINT",
	} {
		t.Run(q, func(t *testing.T) {
			p := o.pair(t)
			p.both(q)
			o.sameLocks(t)
			p.both("SELECT COUNT(*) FROM audit_log")
			p.both("INSERT INTO audit_log VALUES (1, 'under a read lock')") // 1099
			p.both("SELECT COUNT(*) FROM items")                            // 1100: not locked
			p.both("UNLOCK TABLES")
			o.sameLocks(t)
			p.both("INSERT INTO items VALUES (1, 'after UNLOCK TABLES')")
			p.both("DELETE FROM items")
		})
	}
	p := o.pair(t)
	p.refused("FLUSH LOCAL TABLES WITH READ LOCK", connector.ErrSessionState)
	p.refused("FLUSH NO_WRITE_TO_BINLOG TABLES WITH READ LOCK AND DISABLE CHECKPOINT", connector.ErrSessionState)
	o.sameLocks(t)
	p.both("INSERT INTO items VALUES (2, 'no lock held')")
	o.samePlacement(t)
}

// sql_select_limit limits every SELECT without a LIMIT clause, obroute's own too: the
// statements it sends itself to read session variables back carry an explicit LIMIT, so that
// the client session keeps its state (and stays) under sql_select_limit = 0. A catalog read or
// SHOW that obroute answers from both backends is refused under it: each backend would limit
// its part (one server answers one row).
func TestSQLSelectLimitReadBack(t *testing.T) {
	a := newAttackServer(t, false)
	p := a.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1, 'a'), (2, 'b')
		INSERT INTO items VALUES (1, 'a'), (2, 'b')
		SET sql_select_limit = 0
		SELECT @@sql_select_limit LIMIT 1
		SET time_zone = '+03:00'
		SET NAMES utf8mb4 COLLATE utf8mb4_bin
		SELECT id FROM audit_log
		SELECT id FROM items ORDER BY id
		SELECT id FROM audit_log ORDER BY id LIMIT 5
		SELECT @@time_zone, @@collation_connection, @@sql_select_limit FROM audit_log LIMIT 1
		SELECT @@time_zone, @@collation_connection, @@sql_select_limit FROM items LIMIT 1
		SET @v = 7
		SELECT @v FROM audit_log LIMIT 1
		SET sql_select_limit = -1
		SELECT @@sql_select_limit LIMIT 1
		SET sql_select_limit = 1
		SELECT id FROM audit_log ORDER BY id
		SELECT id FROM items ORDER BY id DESC
		!state SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME LIMIT 10
		!state SHOW TABLES
		SET sql_select_limit = DEFAULT
		SELECT id FROM audit_log ORDER BY id
		SELECT @@time_zone, @@collation_connection, @v FROM audit_log`, refusals)
}

// A SELECT split across tables under a sql_select_limit other than the default is refused, with
// a LIMIT clause too: the servers would limit each part (a grouped SELECT's parts carry no
// LIMIT), which the merge cannot undo; with the default it merges, and a SELECT of one table
// runs as on one server.
func TestSQLSelectLimitSplit(t *testing.T) {
	p := newSplitPair(t)
	p.steps(`
		SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id
		SET sql_select_limit = 1
		!state SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id
		!state SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id LIMIT 5
		!state SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-01' GROUP BY amount > 50
		!state SELECT amount > 50, COUNT(*) FROM orders WHERE order_time >= '2024-12-01' GROUP BY amount > 50 LIMIT 5
		SET sql_select_limit = -1
		!state SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id
		SET sql_select_limit = 2
		SELECT id FROM orders WHERE order_time >= '2025-03-01' ORDER BY id
		SET sql_select_limit = DEFAULT
		SELECT id FROM orders WHERE order_time >= '2024-12-01' ORDER BY id`, refusals)
}
