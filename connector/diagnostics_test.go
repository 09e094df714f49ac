package connector_test

import "testing"

// The diagnostics (SHOW WARNINGS, @@warning_count) are those of the last statement that used a
// table or gave conditions of its own, as on one server: a statement that uses no table and
// gives none, wherever obroute runs it, leaves them. When its server session held as many
// conditions before it as after, which cannot be told apart, reading them is refused.
func TestDiagnosticsAfterTableless(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1, 'a')
		SELECT CAST('abc' AS INT) FROM audit_log
		SELECT 1
		SHOW COUNT(*) WARNINGS
		SELECT @@warning_count
		SET @x = 1
		SHOW WARNINGS
		SELECT CAST('x' AS INT), CAST('y' AS INT)
		SELECT 2
		SHOW WARNINGS
		SELECT @@warning_count
		SELECT id FROM audit_log
		SELECT 3
		!state SHOW COUNT(*) WARNINGS
		SELECT id FROM items
		SELECT CAST('z' AS INT) FROM audit_log
		SELECT 4
		SHOW COUNT(*) WARNINGS
		SELECT @@warning_count, @@error_count`, refusals)
}

// A system variable written @@`name` is read as the server reads it, a system variable (not the
// user variable @name): @@`warning_count` reads the diagnostics of the last statement.
func TestQuotedSystemVariable(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1, 'a')
		SELECT CAST('abc' AS INT) FROM audit_log
		SELECT @@`+"`warning_count`"+`
		SELECT @@`+"`warning_count`"+`, @@`+"`error_count`"+` FROM audit_log`, refusals)
}
