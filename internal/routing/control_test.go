package routing

import (
	"strings"
	"testing"
)

// The statements of control are read as MariaDB's manual writes them.
func TestControlStatementsRead(t *testing.T) {
	r := newTestRouter(t, false)
	for _, c := range []struct {
		sql  string
		kind Kind
		want Control
	}{
		{"COMMIT", KindCommit, Control{}},
		{"commit work", KindCommit, Control{}},
		{"COMMIT AND CHAIN", KindCommit, Control{Chain: 1}},
		{"COMMIT WORK AND NO CHAIN NO RELEASE", KindCommit, Control{Chain: -1, Release: -1}},
		{"COMMIT RELEASE;", KindCommit, Control{Release: 1}},
		{"ROLLBACK AND CHAIN", KindRollback, Control{Chain: 1}},
		{"ROLLBACK WORK NO RELEASE", KindRollback, Control{Release: -1}},
		{"ROLLBACK TO SAVEPOINT a", KindSavepoint, Control{Savepoint: SavepointRollbackTo, Name: "a"}},
		{"ROLLBACK WORK TO `Sp 1`", KindSavepoint, Control{Savepoint: SavepointRollbackTo, Name: "sp 1"}},
		{"SAVEPOINT SP0x1", KindSavepoint, Control{Savepoint: SavepointSet, Name: "sp0x1"}},
		{"RELEASE SAVEPOINT a", KindSavepoint, Control{Savepoint: SavepointRelease, Name: "a"}},
		{"XA START 'x'", KindXA, Control{XA: XAStart, Name: "'x'", XidPlain: true}},
		{"XA START 'x', 'b', 3", KindXA, Control{XA: XAStart, Name: "'x','b',3", XidPlain: true}},
		{"XA START 'x', 'b', 'c'", KindXA, Control{XA: XAStart, Name: "'x','b','c'"}},
		{"XA START '" + strings.Repeat("x", 65) + "'", KindXA, Control{XA: XAStart, Name: "'" + strings.Repeat("x", 65) + "'"}},
		{"XA BEGIN 'x', 'b', 3 JOIN", KindXA, Control{XA: XAStart, Name: "'x','b',3"}},
		{"xa end 'x' SUSPEND FOR MIGRATE", KindXA, Control{XA: XAEnd, Name: "'x'"}},
		{"XA PREPARE X'41'", KindXA, Control{XA: XAPrepare, Name: "X'41'"}},
		{"XA COMMIT 'x' ONE PHASE", KindXA, Control{XA: XACommit, Name: "'x'", OnePhase: true}},
		{"XA ROLLBACK 'x'", KindXA, Control{XA: XARollback, Name: "'x'"}},
		{"XA RECOVER FORMAT='SQL'", KindXA, Control{XA: XARecover}},
		{"PREPARE S1 FROM @q", KindPrepare, Control{Name: "s1", TextVar: "@q"}},
		{"EXECUTE s1", KindExecute, Control{Name: "s1"}},
		{"EXECUTE s1 USING @a, 1", KindExecute, Control{Name: "s1", Using: true}},
		{"EXECUTE IMMEDIATE CONCAT('SELECT ', 1)", KindExecute, Control{Immediate: true}},
		{"EXECUTE IMMEDIATE @q USING 1", KindExecute, Control{Immediate: true, TextVar: "@q", Using: true}},
		{"DEALLOCATE PREPARE S1", KindDeallocate, Control{Name: "s1"}},
		{"DROP PREPARE s1", KindDeallocate, Control{Name: "s1"}},
		{"LOCK TABLES items READ, audit_log WRITE", KindOther, Control{Lock: LockTables}},
		{"LOCK TABLE items WRITE", KindOther, Control{Lock: LockTables}},
		{"UNLOCK TABLES", KindOther, Control{Lock: UnlockTable}},
		{"unlock table", KindOther, Control{Lock: UnlockTable}},
		{"FLUSH TABLES WITH READ LOCK", KindOther, Control{Lock: LockRead}},
		{"FLUSH TABLES items FOR EXPORT", KindOther, Control{Lock: LockRead}},
		{"FLUSH LOCAL TABLES items WITH READ LOCK", KindOther, Control{Lock: LockRead}},
		{"flush local table items with read lock;", KindOther, Control{Lock: LockRead}},
		{"FLUSH NO_WRITE_TO_BINLOG TABLE items FOR EXPORT", KindOther, Control{Lock: LockRead}},
		{"FLUSH LOCAL TABLES WITH READ LOCK", KindOther, Control{Lock: LockRead}},
		{"FLUSH TABLES items WITH READ LOCK AND DISABLE CHECKPOINT", KindOther, Control{Lock: LockRead}},
		{"FLUSH TABLES `with`, `for` WITH READ LOCK", KindOther, Control{Lock: LockRead}},
		{"FLUSH LOCAL TABLES items", KindOther, Control{}},
		{"FLUSH NO_WRITE_TO_BINLOG STATUS", KindOther, Control{}},
	} {
		st := r.Analyze(c.sql)
		var got Control
		if st.Control != nil {
			got = *st.Control
			got.Prepared = nil
		}
		if st.Kind != c.kind || got != c.want {
			t.Errorf("%s: %s %+v, want %s %+v", c.sql, st.Kind, got, c.kind, c.want)
		}
	}
	// The text a PREPARE or EXECUTE IMMEDIATE names as a literal is analysed as a statement.
	st := r.Analyze("PREPARE s FROM 'INSERT INTO orders_static VALUES (1)'")
	if c := st.Control; c == nil || c.Text != "INSERT INTO orders_static VALUES (1)" || c.Prepared == nil || c.Prepared.Kind != KindInsert {
		t.Errorf("PREPARE … FROM a literal: %+v", st.Control)
	}
}

// Which statements commit an open transaction before they run: MariaDB's "SQL statements that
// cause an implicit commit", with its exceptions. (The connector's tests check each against the
// server's in_transaction.)
func TestCommitsBefore(t *testing.T) {
	r := newTestRouter(t, false)
	for sql, want := range map[string]bool{
		"CREATE TABLE t (a INT)": true, "CREATE OR REPLACE TABLE t (a INT)": true, "CREATE TEMPORARY TABLE t (a INT)": false,
		"CREATE OR REPLACE TEMPORARY TABLE t (a INT)": false, "DROP TEMPORARY TABLE t": false, "DROP TABLE t": true,
		"ALTER TABLE t ADD b INT": true, "TRUNCATE t": true, "RENAME TABLE a TO b": true, "CREATE INDEX i ON t (a)": true,
		"CREATE FUNCTION f RETURNS STRING SONAME 'x.so'": false, "DROP PREPARE s": false, "LOCK TABLES t READ": true,
		"LOCK TABLE t WRITE": true, "FLUSH STATUS": true, "GRANT SELECT ON *.* TO u": true, "ANALYZE TABLE t": true,
		"CHECK TABLE t": true, "CHECKSUM TABLE t": false, "SET PASSWORD = PASSWORD('x')": true, "SET @a = 1": false,
		"START TRANSACTION": false, "START SLAVE": true, "LOAD INDEX INTO CACHE t": false, "LOAD DATA INFILE 'x' INTO TABLE t": false,
		"INSERT INTO t VALUES (1)": false, "SELECT 1": false, "UNLOCK TABLES": false, "CACHE INDEX t IN k": false,
		"CREATE TEMPORARY SEQUENCE s": true, "SET DEFAULT ROLE NONE": true, "SET ROLE NONE": false, "BACKUP STAGE START": true,
		"SET STATEMENT max_statement_time = 1 FOR CREATE TABLE t (a INT)": true, "SET STATEMENT max_statement_time = 1 FOR SELECT 1": false,
	} {
		if got := r.Analyze(sql).CommitsTx; got != want {
			t.Errorf("%s: CommitsTx %v, want %v", sql, got, want)
		}
	}
}

// The values of session functions are written into a statement as the server would type them,
// and an unaliased select item keeps the name the server gives it, its text.
func TestWithSessionValues(t *testing.T) {
	r := newTestRouter(t, false)
	v := SessionValues{FoundRows: 12, RowCount: -1, WarningCount: 3, ErrorCount: 0}
	v.Reads = ReadsFoundRows | ReadsRowCount | ReadsDiagnostics
	for _, c := range []struct{ sql, want string }{
		{"SELECT FOUND_ROWS()", "SELECT 00000000000000000012 AS `FOUND_ROWS()`"},
		{"SELECT found_rows( ) + 1, ROW_COUNT() AS rc, 7", "SELECT 00000000000000000012 + 1 AS `found_rows( ) + 1`, -0000000000000000001 AS rc, 7"},
		{"/* c */ SELECT DISTINCT ROW_COUNT() n FROM items", "/* c */ SELECT DISTINCT -0000000000000000001 n FROM items"},
		{"INSERT INTO log VALUES (ROW_COUNT())", "INSERT INTO log VALUES (-0000000000000000001)"},
		{"SELECT @@warning_count, @@session.error_count", "SELECT NULLIF(CAST(00000000000000000003 AS UNSIGNED), NULL) AS `@@warning_count`, NULLIF(CAST(00000000000000000000 AS UNSIGNED), NULL) AS `@@session.error_count`"},
		{"SHOW COUNT(*) WARNINGS", "SELECT NULLIF(CAST(00000000000000000003 AS UNSIGNED), NULL) AS `@@session.warning_count`"},
		{"SELECT (SELECT FOUND_ROWS()) AS x", "SELECT (SELECT 00000000000000000012) AS x"},
	} {
		got, ok := r.Analyze(c.sql).WithSessionValues(v)
		if !ok || got != c.want {
			t.Errorf("%s:\n got %q, %v\nwant %q", c.sql, got, ok, c.want)
		}
	}
	for _, sql := range []string{"GET DIAGNOSTICS @n = NUMBER", "SELECT LAST_INSERT_ID(5), LAST_INSERT_ID()"} {
		w := v
		w.Reads |= ReadsInsertID
		if got, ok := r.Analyze(sql).WithSessionValues(w); ok {
			t.Errorf("%s: %q, want it refused", sql, got)
		}
	}
	for sql, want := range map[string][3]any{
		"SHOW WARNINGS": {"SHOW WARNINGS", int64(0), int64(-1)}, "show errors limit 2": {"SHOW ERRORS", int64(0), int64(2)},
		"SHOW WARNINGS LIMIT 1, 3;": {"SHOW WARNINGS", int64(1), int64(3)},
	} {
		show, offset, limit, ok := ShowDiagnostics(sql)
		if !ok || show != want[0] || offset != want[1] || limit != want[2] {
			t.Errorf("%s: %q %d %d %v, want %v", sql, show, offset, limit, ok, want)
		}
	}
}
