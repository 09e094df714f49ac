// Forms of statement an attack on shadow routing found reaching production (2026-12-03): each
// comment says what obroute did before the fix; now each is refused (connector.ErrUnreadable:
// a statement of another kind than SELECT, INSERT, UPDATE or DELETE that reads or writes the
// rows of a shadow table whose rule reads column values) or routed to shadow.
package connector_test

import (
	"context"
	"strings"
	"testing"
)

// shadowNeverOnProduction runs stmts in order on one client session of a fresh shadow world and
// fails when a production backend's general log holds a line carrying marker, or production's
// table holds a row with the shadow value user_id = 0. Each statement may run (on shadow) or be
// refused; only reaching production fails.
func shadowNeverOnProduction(t *testing.T, marker, table string, stmts ...string) {
	t.Helper()
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		_, err := conn.ExecContext(ctx, s)
		t.Logf("%q: err = %v", s, err)
	}
	if lines := w.productionLines(t, marker); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry the shadow statement, first: %q", len(lines), lines[0])
	}
	if table != "" {
		for _, b := range w.prod {
			for _, r := range shadowRows(t, b, table) {
				if strings.Split(r, ":")[1] == "0" {
					t.Errorf("production %s holds the shadow row %s of %s", b.Name, r, table)
				}
			}
		}
	}
}

// SET STATEMENT … FOR an INSERT of the shadow value into t_order (a value_match shadow table):
// the README says such a statement, naming a shadow table whose rule reads column values, is
// refused; it runs on production hot and stores the shadow row there.
func TestShadowWrappedSetStatementForInsertsShadowRowOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23setstmt", "t_order",
		"SET STATEMENT max_statement_time=10 FOR INSERT INTO t_order (id, user_id, note) VALUES (1, 0, 'x23setstmt')")
}

// DO with a subquery reading the shadow rows of t_order (user_id = 0: shadow by the select
// algorithm) is sent to production hot.
func TestShadowWrappedDoSubqueryReadsShadowRowsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23do", "",
		"DO (SELECT COUNT(*) FROM t_order WHERE user_id = 0 AND note <> 'x23do')")
}

// HANDLER t_order READ … WHERE user_id = 0 reads the shadow rows on production hot.
func TestShadowWrappedHandlerReadWhereShadowValueOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23handler", "",
		"HANDLER t_order OPEN",
		"HANDLER t_order READ FIRST WHERE user_id = 0 AND note <> 'x23handler'",
		"HANDLER t_order CLOSE")
}

// LOAD XML INTO TABLE t_order (rows obroute cannot read, on a value_match shadow table) is sent to
// production hot, where LOAD DATA is refused. Here the server refuses the file
// (secure_file_priv), but the statement has reached production.
func TestShadowWrappedLoadXMLIntoShadowTableReachesProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23loadxml", "",
		"LOAD XML INFILE '/nonexistent/x23loadxml.xml' INTO TABLE t_order")
}

// SET @n = (SELECT … FROM t_order WHERE user_id = 0): a subquery reading the shadow rows, sent to
// production hot (a routed table's subquery in a SET routes the SET; a shadow table's does not).
func TestShadowWrappedSetSubqueryReadsShadowRowsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23setsub", "",
		"SET @n = (SELECT COUNT(*) FROM t_order WHERE user_id = 0 AND note <> 'x23setsub')")
}

// CREATE TABLE … AS SELECT of t_order's shadow rows runs on production hot.
func TestShadowWrappedCreateTableSelectOfShadowRowsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23ctas", "",
		"CREATE TABLE x23ctas AS SELECT * FROM t_order WHERE user_id = 0")
}

// ANALYZE DELETE runs the DELETE: one of t_order's shadow rows (user_id = 0) runs on production
// hot.
func TestShadowWrappedAnalyzeDeleteOfShadowRowsRunsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23andel", "",
		"ANALYZE DELETE FROM t_order WHERE user_id = 0 AND note = 'x23andel'")
}

// ANALYZE SELECT runs the SELECT of t_order's shadow rows on production hot.
func TestShadowWrappedAnalyzeSelectOfShadowRowsRunsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23ansel", "",
		"ANALYZE SELECT note FROM t_order WHERE user_id = 0 AND note = 'x23ansel'")
}

// EXPLAIN of a SELECT of t_order's shadow rows (shadow traffic by the select algorithm) is sent to
// production hot.
func TestShadowWrappedExplainSelectOfShadowRowsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23explain", "",
		"EXPLAIN SELECT note FROM t_order WHERE user_id = 0 AND note = 'x23explain'")
}

// SET STATEMENT … FOR DELETE of t_order's shadow rows runs on production hot (its UPDATE is
// refused).
func TestShadowWrappedSetStatementForDeleteOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23setdel", "",
		"SET STATEMENT max_statement_time=10 FOR DELETE FROM t_order WHERE user_id = 0 AND note <> 'x23setdel'")
}

// SET STATEMENT … FOR REPLACE / INSERT … SET of the shadow value stores the row on production hot.
func TestShadowWrappedSetStatementForReplaceAndInsertSetOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23setrep", "t_order",
		"SET STATEMENT max_statement_time=10 FOR REPLACE INTO t_order (id, user_id, note) VALUES (1, 0, 'x23setrep')",
		"SET STATEMENT sql_mode='' FOR INSERT INTO t_order SET id = 2, user_id = 0, note = 'x23setrep'")
}

// EXECUTE IMMEDIATE (and PREPARE … EXECUTE) of a SET STATEMENT … FOR INSERT of the shadow value
// stores the row on production hot.
func TestShadowWrappedExecuteImmediateSetStatementForInsertOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23exim", "t_order",
		"EXECUTE IMMEDIATE 'SET STATEMENT max_statement_time=10 FOR INSERT INTO t_order (id, user_id, note) VALUES (1, 0, ''x23exim'')'",
		"PREPARE s FROM 'SET STATEMENT max_statement_time=10 FOR INSERT INTO t_order (id, user_id, note) VALUES (2, 0, ''x23exim'')'",
		"EXECUTE s")
}

// LOAD DATA INFILE … INTO TABLE t_order is refused, but LOAD DATA LOW_PRIORITY / CONCURRENT is
// sent to production hot (refused there only by secure_file_priv).
func TestShadowWrappedLoadDataLowPriorityIntoShadowTableReachesProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23loadlp", "",
		"LOAD DATA LOW_PRIORITY INFILE '/nonexistent/x23loadlp' INTO TABLE t_order",
		"LOAD DATA CONCURRENT INFILE '/nonexistent/x23loadlp' REPLACE INTO TABLE t_order")
}

// A SET of a system variable, or of several user variables, from a subquery of t_order's shadow
// rows is sent to production hot.
func TestShadowWrappedSetVariablesFromShadowSubqueryOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23setsys", "",
		"SET SESSION sql_select_limit = (SELECT COUNT(*) + 5 FROM t_order WHERE user_id = 0 AND note <> 'x23setsys')",
		"SET @a = 1, @b = (SELECT COUNT(*) FROM t_order WHERE user_id = 0 AND note <> 'x23setsys')")
}

// CREATE VIEW / CREATE TEMPORARY TABLE … SELECT of t_order's shadow rows run on production hot.
func TestShadowWrappedCreateViewAndTempTableOfShadowRowsOnProduction(t *testing.T) {
	shadowNeverOnProduction(t, "x23cview", "",
		"CREATE VIEW x23cview AS SELECT * FROM t_order WHERE user_id = 0",
		"CREATE TEMPORARY TABLE x23ctmp AS SELECT * FROM t_order WHERE user_id = 0 AND note <> 'x23cview'")
}

// A shadow-hinted SET STATEMENT … FOR INSERT of a production value (user_id = 7) into t_order, a
// table with only column algorithms: the README refuses `/* shadow */` with production values
// (ErrNoShadowBackend); this one runs, and shadow_hot stores the production row.
func TestShadowWrappedShadowHintedSetStatementForStoresProductionRowOnShadow(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	q := "/* shadow */ SET STATEMENT max_statement_time=10 FOR INSERT INTO t_order (id, user_id, note) VALUES (1, 7, 'x23prodonshadow')"
	_, err := db.ExecContext(context.Background(), q)
	t.Logf("%q: err = %v", q, err)
	for _, b := range w.shadows {
		for _, r := range shadowRows(t, b, "t_order") {
			if strings.Split(r, ":")[1] != "0" {
				t.Errorf("shadow %s holds the production row %s of t_order", b.Name, r)
			}
		}
	}
}
