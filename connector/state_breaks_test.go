package connector_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// splitRows lists orders' rows over the physical tables of newSplitPair's backends, in id order,
// beside the one server's.
func splitRows(t *testing.T, p *pair) (got, want []string) {
	t.Helper()
	for _, table := range []string{"orders_202501", "orders_202502", "orders_202503"} {
		got = append(got, rowsOf(t, p.o.hot.DB, "SELECT id, CAST(order_time AS CHAR), amount FROM "+table)...)
	}
	got = append(got, rowsOf(t, p.o.cold.DB, "SELECT id, CAST(order_time AS CHAR), amount FROM orders_202412")...)
	slices.Sort(got)
	want = rowsOf(t, p.o.one.DB, "SELECT id, CAST(order_time AS CHAR), amount FROM orders")
	slices.Sort(want)
	return got, want
}

// splitRefusals are refusals plus that of a write across backends.
var splitRefusals = map[string]error{"tx": connector.ErrCrossBackendTx, "write": connector.ErrCrossBackendWrite}

func sameSplitRows(t *testing.T, p *pair) {
	t.Helper()
	if got, want := splitRows(t, p); !slices.Equal(got, want) {
		t.Errorf("orders over the backends: %v\n one server: %v", got, want)
	}
}

// A client's savepoint named as obroute's own savepoint of split writes (any case, quoted or
// not) would be moved and released by the next split write inside the transaction, and a later
// ROLLBACK TO it fail or undo less than one server: it is refused.
func TestSavepointNamedAsSplits(t *testing.T) {
	p := newSplitPair(t)
	p.steps(`
		BEGIN
		INSERT INTO orders (id, order_time, amount, note) VALUES (100, '2025-02-11 10:00:00', 1, 'x')
		!state SAVEPOINT OBROUTE_SPLIT
		!state SAVEPOINT `+"`obroute_split`"+`
		!state ROLLBACK TO SAVEPOINT Obroute_Split
		!state RELEASE SAVEPOINT obroute_split
		!state ROLLBACK WORK TO obroute_split
		!state SAVEPOINT obroute_split;
		!state SAVEPOINT /* c */ obroute_split
		!state EXECUTE IMMEDIATE 'SAVEPOINT obroute_split'
		!state PREPARE sp FROM 'SAVEPOINT obroute_split'
		SAVEPOINT s1
		INSERT INTO orders (id, order_time, amount, note) VALUES (101, '2025-02-12 10:00:00', 1, 'x'), (102, '2025-03-12 10:00:00', 1, 'y')
		ROLLBACK TO SAVEPOINT s1
		COMMIT
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND id >= 100 ORDER BY id`, refusals)
	sameSplitRows(t, p)
}

// With autocommit off, a savepoint set before the transaction's first statement holds for a
// split write that opens it: ROLLBACK TO it undoes every part, as on one server; a split write
// whose parts are on two backends is refused before anything is written.
func TestSavepointBeforeSplitWrite(t *testing.T) {
	p := newSplitPairWith(t, config.TimeTable{AllowColdWrites: true})
	p.steps(`
		SET autocommit = 0
		SAVEPOINT s1
		INSERT INTO orders (id, order_time, amount, note) VALUES (200, '2025-02-11 10:00:00', 1, 'a'), (201, '2025-03-12 10:00:00', 1, 'b')
		ROLLBACK TO s1
		SELECT id FROM orders WHERE order_time >= '2025-01-01' AND id >= 200 ORDER BY id
		INSERT INTO orders (id, order_time, amount, note) VALUES (202, '2025-02-13 10:00:00', 1, 'c'), (203, '2025-03-13 10:00:00', 1, 'd')
		COMMIT
		SAVEPOINT s2
		!write INSERT INTO orders (id, order_time, amount, note) VALUES (204, '2024-12-20 10:00:00', 1, 'cold'), (205, '2025-03-14 10:00:00', 1, 'hot')
		ROLLBACK TO SAVEPOINT s2
		ROLLBACK
		SET autocommit = 1
		BEGIN
		SAVEPOINT s3
		INSERT INTO orders (id, order_time, amount, note) VALUES (206, '2025-02-14 10:00:00', 1, 'e'), (207, '2025-03-14 10:00:00', 1, 'f')
		ROLLBACK TO SAVEPOINT s3
		INSERT INTO orders (id, order_time, amount, note) VALUES (208, '2025-02-15 10:00:00', 1, 'g'), (209, '2025-03-15 10:00:00', 1, 'h')
		COMMIT
		BEGIN
		INSERT INTO orders (id, order_time, amount, note) VALUES (210, '2024-12-21 10:00:00', 1, 'cold')
		!tx INSERT INTO orders (id, order_time, amount, note) VALUES (211, '2025-02-16 10:00:00', 1, 'i'), (212, '2025-03-16 10:00:00', 1, 'j')
		ROLLBACK
		SET autocommit = 0
		INSERT INTO orders (id, order_time, amount, note) VALUES (213, '2024-12-22 10:00:00', 1, 'cold')
		!tx INSERT INTO orders (id, order_time, amount, note) VALUES (214, '2025-02-17 10:00:00', 1, 'k'), (215, '2025-03-17 10:00:00', 1, 'l')
		ROLLBACK
		SET autocommit = 1
		SELECT id FROM orders WHERE order_time >= '2024-12-01' AND id >= 200 ORDER BY id`, splitRefusals)
	sameSplitRows(t, p)
}

// SET STATEMENT assignments FOR SET assignments is followed as the inner SET: every variable it
// assigns is recorded with the value the server holds after it (an inner assignment of a
// variable of the outer list is undone there, and a value may read the outer ones), and
// replayed to the other backend. FOR SET TRANSACTION (the next transaction's) and FOR another
// SET STATEMENT keep the client session on that server session, as CALL does; FOR SET insert_id
// is refused as SET insert_id is.
func TestSetStatementForSet(t *testing.T) {
	a := newAttackServer(t, false)
	for _, tc := range []struct{ name, script string }{
		{"session variables", `
			SET STATEMENT sql_mode = '' FOR SET time_zone = '+03:00', @@session.max_join_size = 1000
			SELECT @@time_zone, @@max_join_size, @@sql_big_selects, @@sql_mode = 'STRICT_TRANS_TABLES' FROM audit_log
			SELECT @@time_zone, @@max_join_size, @@sql_big_selects FROM items`},
		{"after cold", `
			SELECT 1 FROM audit_log
			SET STATEMENT max_statement_time = 10 FOR SET time_zone = '+04:00', @u = 5
			SELECT @@time_zone, @u, @@max_statement_time
			SELECT @@time_zone, @u, @@max_statement_time FROM items
			SELECT @@time_zone, @u, @@max_statement_time FROM audit_log`},
		{"a variable of the outer list", `
			SET STATEMENT time_zone = '+01:00' FOR SET time_zone = '+03:00', @c = @@time_zone
			SELECT @@time_zone, @c FROM audit_log
			SELECT @@time_zone, @c FROM items`},
		{"values read with the outer variables", `
			SET STATEMENT sql_mode = 'NO_BACKSLASH_ESCAPES' FOR SET @r = 'a\b', @s = CONCAT(@@sql_mode, '!')
			SELECT @r, @s, LENGTH(@r) FROM audit_log
			SET STATEMENT time_zone = '+09:00' FOR SET @t = CAST(FROM_UNIXTIME(0) AS CHAR)
			SELECT @t FROM audit_log`},
		{"sql_mode itself", `
			SET STATEMENT time_zone = '+01:00' FOR SET sql_mode = 'ANSI_QUOTES'
			SELECT @@sql_mode FROM audit_log
			SELECT "note" FROM audit_log
			SET sql_mode = DEFAULT`},
		{"names", `
			SET STATEMENT sql_mode = '' FOR SET NAMES latin1
			SELECT @@character_set_client, @@collation_connection FROM audit_log
			SET NAMES utf8mb4
			SELECT @@character_set_client FROM audit_log`},
		{"autocommit", `
			SET STATEMENT sql_mode = '' FOR SET autocommit = 0
			INSERT INTO audit_log VALUES (3, 'in the implicit transaction')
			ROLLBACK
			SELECT COUNT(*) FROM audit_log
			SET autocommit = 1`},
		{"subquery of a routed table", `
			INSERT INTO audit_log VALUES (4, 'x')
			SET STATEMENT sql_mode = '' FOR SET @k = (SELECT COUNT(*) FROM audit_log)
			SELECT @k FROM items`},
		{"kept on its server session", `
			SET STATEMENT sql_mode = '' FOR SET TRANSACTION READ ONLY
			!state INSERT INTO audit_log VALUES (5, 'x')
			INSERT INTO items VALUES (5, 'x')`},
		{"nested", `
			SET STATEMENT sql_mode = '' FOR SET STATEMENT time_zone = '+02:00' FOR SET @n = @@time_zone
			!state SELECT @n FROM audit_log`},
		{"spent", `
			!state SET STATEMENT sql_mode = '' FOR SET insert_id = 5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.pair(t)
			a.seed(t)
			p.steps(tc.script, refusals)
			a.placement(t)
		})
	}
}

// seed empties the attack server's tables and gives each one row (id 1000), so that a SELECT …
// FROM it answers a row whose columns are compared.
func (a *attackServer) seed(t *testing.T) {
	t.Helper()
	for tbl, home := range attackHomes {
		for _, b := range []*sqltest.Backend{a.hot, a.cold, a.one} {
			b.Exec(t, "DELETE FROM "+tbl)
			if b == a.one || b.Name == home {
				b.Exec(t, "INSERT INTO "+tbl+" VALUES (1000, 'seed')")
			}
		}
	}
}

// A system variable assigned in any spelling the server reads — spaces or a comment around the
// dot after @@session, @@local and @@global, the name backquoted or quoted after the dot, @@`name`
// — is recorded as that variable, and replayed to the other backend; a user variable's quoted
// name too. A SET obroute cannot read as session state (SET ROLE) keeps the client session on
// that server session, as CALL does, rather than run unfollowed.
func TestSetVariableSpellings(t *testing.T) {
	a := newAttackServer(t, false)
	for _, tc := range []struct{ name, script string }{
		{"spaces around the dot", `
			SET @@session . time_zone = '+01:00'
			SELECT @@time_zone FROM audit_log
			SET @@session .time_zone = '+02:00', @@local. max_join_size = 1000
			SELECT @@time_zone, @@max_join_size, @@sql_big_selects FROM audit_log
			SET @@local /* c */ . time_zone = '+03:00'
			SELECT @@time_zone FROM audit_log
			SELECT @@time_zone FROM items`},
		{"quoted names", "SET @@`time_zone` = '+04:00'\n" +
			"SELECT @@time_zone FROM audit_log\n" +
			"SET @@session.`TIME_ZONE` = '+05:00'\n" +
			"SELECT @@time_zone FROM audit_log\n" +
			"SET @@session . 'time_zone' = '+06:00'\n" +
			"SELECT @@time_zone FROM audit_log\n" +
			"SET @@session.\"time_zone\" := '+07:00'\n" +
			"SELECT @@time_zone FROM audit_log\n" +
			"SET SESSION `time_zone` = '+08:00'\n" +
			"SELECT @@time_zone FROM audit_log\n" +
			"SELECT @@time_zone FROM items"},
		{"sql_mode", "SET @@`sql_mode` = 'ANSI_QUOTES'\n" +
			"SELECT \"note\" FROM audit_log\n" +
			"SET sql_mode = DEFAULT\n" +
			"SET @@session . sql_mode = 'ANSI_QUOTES'\n" +
			"SELECT \"note\" FROM audit_log\n" +
			"SELECT @@sql_mode FROM items\n" +
			"SET sql_mode = DEFAULT"},
		{"autocommit", "SET @@session . autocommit = 0\n" +
			"INSERT INTO audit_log VALUES (1, 'x')\n" +
			"ROLLBACK\n" +
			"SET @@`autocommit` = 0\n" +
			"INSERT INTO audit_log VALUES (2, 'y')\n" +
			"ROLLBACK\n" +
			"SELECT COUNT(*) FROM audit_log\n" +
			"SET autocommit = 1"},
		{"names", "SET @@`character_set_client` = latin1\n" +
			"SELECT @@character_set_client FROM audit_log\n" +
			"SET NAMES utf8mb4"},
		{"user variables", "SET @`a b` = 1, @'q' = 2, @\"d\" = 3, @a.b = 4\n" +
			"SELECT @`a b`, @q, @d, @`a.b` FROM audit_log"},
		{"global", "SET @@global . `time_zone` = @@global.time_zone\n" +
			"SELECT @@time_zone FROM audit_log"},
		{"refused by the server", "SET @@`session`.`time_zone` = '+01:00'\n" +
			"SET @@session.mykc.key_buffer_size = 0\n" +
			"SET @@'time_zone' = '+01:00'\n" +
			"SET SESSION @@time_zone = '+01:00'\n" +
			"SELECT @@time_zone FROM audit_log"},
		{"set role", `
			SET ROLE NONE
			SELECT CURRENT_ROLE()
			!state SELECT CURRENT_ROLE() FROM audit_log`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.pair(t)
			a.seed(t)
			p.steps(tc.script, refusals)
			a.placement(t)
		})
	}
}

// GET CURRENT DIAGNOSTICS, as GET DIAGNOSTICS, reads the diagnostics of the last statement where
// it ran, and the user variables it assigns are read back and kept; GET STACKED DIAGNOSTICS
// outside a handler fails as on one server. After a statement split across tables (whose
// diagnostics obroute holds) it is refused.
func TestGetCurrentDiagnostics(t *testing.T) {
	a := newAttackServer(t, false)
	for _, tc := range []struct{ name, script string }{
		{"number after cold", `
			INSERT INTO audit_log VALUES (18, 'w')
			SELECT CAST('abc' AS INT), CAST('x' AS INT) FROM audit_log
			GET CURRENT DIAGNOSTICS @n = NUMBER
			SELECT @n
			SELECT @n FROM audit_log`},
		{"condition after cold", `
			SELECT CAST('abc' AS INT) FROM audit_log
			get current diagnostics condition 1 @c = MESSAGE_TEXT, @e = MYSQL_ERRNO
			SELECT @c, @e FROM items`},
		{"after hot, read on cold", `
			SELECT CAST('abc' AS INT) FROM items
			GET CURRENT DIAGNOSTICS @n = NUMBER, @r = ROW_COUNT
			SELECT @n, @r FROM audit_log`},
		{"stacked", `
			SELECT CAST('abc' AS INT) FROM audit_log
			GET STACKED DIAGNOSTICS @n = NUMBER
			SELECT @n FROM items`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.pair(t)
			a.seed(t)
			p.steps(tc.script, refusals)
			a.placement(t)
		})
	}
	t.Run("after a split statement", func(t *testing.T) {
		p := newSplitPair(t)
		p.steps(`
			SELECT id, CAST(note AS SIGNED) FROM orders WHERE order_time >= '2024-12-01' ORDER BY id
			!state GET CURRENT DIAGNOSTICS @n = NUMBER
			!state GET DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT
			SELECT id FROM orders WHERE order_time >= '2025-03-01' AND CAST(note AS SIGNED) = 0 ORDER BY id
			GET CURRENT DIAGNOSTICS @n = NUMBER
			SELECT @n`, refusals)
	})
}

// LAST_INSERT_ID() is one server's wherever it is read: after an INSERT on a routed table and
// statements on another backend; after an INSERT that gave its AUTO_INCREMENT column a value
// (which generates none, and leaves LAST_INSERT_ID() where it was, although the INSERT's result
// carries that value), which obroute tells by setting it to 0 on that backend before the INSERT;
// after LAST_INSERT_ID(expr) in any statement; and with the FOUND_ROWS() and ROW_COUNT() it
// reads beside it kept.
func TestLastInsertIDAcrossBackends(t *testing.T) {
	a := newAttackServer(t, false)
	for _, tc := range []struct{ name, script string }{
		{"insert cold then select hot", `
			INSERT INTO ai_cold (note) VALUES ('a')
			SELECT note FROM items
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM items`},
		{"twice on hot", `
			INSERT INTO ai_cold (note) VALUES ('a')
			INSERT INTO ai_hot VALUES (50, 'explicit')
			INSERT INTO ai_hot (note) VALUES ('generated')
			INSERT INTO ai_hot VALUES (70, 'explicit')
			SELECT LAST_INSERT_ID() FROM audit_log
			SELECT LAST_INSERT_ID()`},
		{"explicit twice", `
			INSERT INTO ai_cold (note) VALUES ('a')
			INSERT INTO ai_hot VALUES (50, 'explicit')
			INSERT INTO ai_hot VALUES (51, 'explicit')
			SELECT LAST_INSERT_ID() FROM items
			INSERT INTO ai_cold VALUES (60, 'explicit')
			SELECT LAST_INSERT_ID()`},
		{"found rows kept", `
			SELECT id FROM ai_hot
			INSERT INTO ai_cold (note) VALUES ('a')
			INSERT INTO ai_hot VALUES (50, 'explicit')
			SELECT LAST_INSERT_ID(), ROW_COUNT()`},
		{"do expr", `
			DO LAST_INSERT_ID(7)
			SELECT LAST_INSERT_ID() FROM audit_log
			SELECT LAST_INSERT_ID()`},
		{"set expr", `
			SET @x = LAST_INSERT_ID(9)
			SELECT @x, LAST_INSERT_ID() FROM audit_log
			SELECT LAST_INSERT_ID()`},
		{"select expr on cold", `
			SELECT LAST_INSERT_ID(5) FROM audit_log
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM items`},
		{"update expr on cold", `
			UPDATE ai_cold SET note = 'u' WHERE id = LAST_INSERT_ID(id)
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM items`},
		{"insert explicit id keeps", `
			INSERT INTO ai_cold (note) VALUES ('a')
			INSERT INTO ai_hot VALUES (50, 'explicit')
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM audit_log`},
		{"insert failing", `
			INSERT INTO ai_cold (note) VALUES ('a')
			INSERT INTO ai_hot VALUES (1000, 'dup')
			SELECT LAST_INSERT_ID()
			SELECT LAST_INSERT_ID() FROM items`},
		{"insert select", `
			INSERT INTO ai_cold (note) SELECT note FROM ai_cold
			SELECT LAST_INSERT_ID() FROM items`},
		{"insert with expr", `
			INSERT INTO ai_cold (note) VALUES (LAST_INSERT_ID(77))
			SELECT LAST_INSERT_ID() FROM items
			SELECT LAST_INSERT_ID()`},
		{"multi row hot", `
			INSERT INTO ai_hot (note) VALUES ('a'), ('b'), ('c')
			SELECT LAST_INSERT_ID() FROM audit_log
			SELECT LAST_INSERT_ID()`},
		{"identity var", `
			INSERT INTO ai_cold (note) VALUES ('a')
			SELECT @@identity, @@last_insert_id
			SELECT @@session.identity FROM items`},
		{"execute immediate", `
			EXECUTE IMMEDIATE 'SELECT LAST_INSERT_ID(11)'
			SELECT LAST_INSERT_ID() FROM audit_log`},
		{"insert id 0", `
			INSERT INTO ai_cold (note) VALUES ('a')
			SELECT LAST_INSERT_ID(0)
			SELECT LAST_INSERT_ID() FROM audit_log`},
		{"set insert id expr in where", `
			SELECT id FROM ai_hot WHERE LAST_INSERT_ID(id) > 0
			SELECT LAST_INSERT_ID() FROM audit_log`},
		{"replace", `
			REPLACE INTO ai_cold (note) VALUES ('r')
			SELECT LAST_INSERT_ID() FROM items`},
		{"odku", `
			INSERT INTO ai_cold (id, note) VALUES (1000, 'x') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)
			SELECT LAST_INSERT_ID() FROM items`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.pair(t)
			a.seed(t)
			p.steps(tc.script, refusals)
			a.placement(t)
		})
	}
	// Through Exec, whose result carries the explicit value.
	ctx := context.Background()
	a.seed(t)
	p := a.pair(t)
	for _, q := range []string{"INSERT INTO ai_cold (note) VALUES ('a')", "INSERT INTO ai_hot VALUES (50, 'explicit')"} {
		for _, c := range []*sql.Conn{p.ob, p.ref} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	p.both("SELECT LAST_INSERT_ID()")
	p.both("SELECT LAST_INSERT_ID() FROM audit_log")
}
