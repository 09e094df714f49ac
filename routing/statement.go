package routing

import (
	"errors"
	"fmt"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/hint"
)

// Kind classifies a statement by what the router and the client session must do with it.
type Kind uint8

// Statement kinds.
const (
	KindOther        Kind = iota // anything else: sent as it is to the routed backend
	KindSelect                   // SELECT, UNION, WITH … SELECT
	KindInsert                   // INSERT and REPLACE
	KindUpdate                   // UPDATE
	KindDelete                   // DELETE
	KindDDL                      // CREATE, ALTER, DROP, TRUNCATE, RENAME
	KindSet                      // SET of session or user variables
	KindUse                      // USE db
	KindBegin                    // BEGIN, START TRANSACTION
	KindCommit                   // COMMIT
	KindRollback                 // ROLLBACK (not ROLLBACK TO SAVEPOINT)
	KindShow                     // SHOW …
	KindExplainRoute             // EXPLAIN ROUTE <statement>: answered by obroute itself
)

var kindNames = [...]string{"OTHER", "SELECT", "INSERT", "UPDATE", "DELETE", "DDL", "SET", "USE", "BEGIN", "COMMIT", "ROLLBACK", "SHOW", "EXPLAIN_ROUTE"}

// String returns the kind's upper-case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IsDML reports whether the kind is a data manipulation statement (SELECT, INSERT, UPDATE, DELETE).
func (k Kind) IsDML() bool { return k >= KindSelect && k <= KindDelete }

// SessionVar is one assignment of a SET statement, kept by the client session and re-applied to
// server sessions that are behind.
type SessionVar struct {
	// Name identifies the variable: a lower-case system variable name without scope ("time_zone"),
	// "@name" for a user variable, "names" for SET NAMES / CHARACTER SET, "transaction" for
	// SET SESSION TRANSACTION.
	Name string
	// Assignment is the SQL text of the assignment as it can stand in a SET list, e.g.
	// "time_zone = '+08:00'", or a whole statement when Standalone is set.
	Assignment string
	// Standalone marks an assignment that cannot share a SET list (SET SESSION TRANSACTION …):
	// Assignment is then a complete statement.
	Standalone bool
	// Value is the assigned literal in lower case when it is a simple literal ("0", "on",
	// "+08:00"), else "".
	Value string
}

// Statement is what the router knows about one SQL text. It is computed once per text, cached,
// and shared by every client session: it must never be modified after Analyze returns it.
type Statement struct {
	// SQL is the statement text exactly as the application sent it.
	SQL string
	// Kind classifies the statement.
	Kind Kind
	// Hints are the hints of the statement's leading comments.
	Hints hint.Set
	// HintErr is the error of a malformed hint comment; the statement is refused with it.
	HintErr error
	// Tables are the base tables the statement names, lower case, unqualified, in order of
	// appearance, without duplicates.
	Tables []string
	// TempTableCreated is the table a CREATE TEMPORARY TABLE creates, lower case.
	TempTableCreated string
	// TempTablesDropped are the tables a DROP TEMPORARY TABLE drops, lower case.
	TempTablesDropped []string
	// SessionDependent marks statements whose meaning depends on the previous statement's server
	// session: FOUND_ROWS(), ROW_COUNT(), LAST_INSERT_ID(), SHOW WARNINGS, SHOW ERRORS.
	SessionDependent bool
	// Vars are the session assignments of a SET statement (KindSet).
	Vars []SessionVar
	// NextTransaction is the text of a one-shot "SET TRANSACTION …" (no scope): it applies to the
	// next transaction only, on whatever backend that transaction binds to.
	NextTransaction string
	// GlobalSet marks a SET that assigns a GLOBAL variable; it is not session state.
	GlobalSet bool
	// Database is the database of a USE statement.
	Database string
	// ReadOnly is set for START TRANSACTION READ ONLY.
	ReadOnly bool
	// Explained is the statement that EXPLAIN ROUTE explains (KindExplainRoute).
	Explained *Statement
	// ParseErr is set when the parser could not read the statement. The statement still runs
	// (obroute never blocks valid SQL of the backend), routed by the cached-server rule.
	ParseErr error
	// Params is the number of ? placeholders in the statement.
	Params int
	// RouteErr refuses the statement: it breaks a time-routing rule (a function on the shard key,
	// a join of two time-sharded tables, …). Unlike ParseErr, the statement is never sent.
	RouteErr error

	// logText is SQL with its string literals masked, set when the statement may carry a
	// password (IDENTIFIED BY, PASSWORD(…), SET PASSWORD); see LogText.
	logText string

	ast  sqlparser.Statement
	time *timeStatement // time-sharding analysis, nil when no time-sharded table is involved
}

// explainRoutePrefix introduces a statement that obroute explains instead of running.
const explainRoutePrefix = "explain route"

// analyze classifies sql. It never fails: what it cannot parse is marked with ParseErr.
func (r *Router) analyze(sql string) *Statement {
	st := &Statement{SQL: sql, logText: maskSecrets(sql)}
	hints, _, err := hint.ParseLeading(sql)
	st.Hints, st.HintErr = hints, err
	body := sql[hint.StatementStart(sql):]
	if hasPrefixFold(body, explainRoutePrefix) && len(body) > len(explainRoutePrefix) && isSpace(body[len(explainRoutePrefix)]) {
		st.Kind = KindExplainRoute
		st.Explained = r.Analyze(strings.TrimSpace(body[len(explainRoutePrefix):]))
		return st
	}
	ast, bindVars, err := r.parser.Parse2(sql)
	if err != nil {
		st.ParseErr = err
		st.Kind = previewKind(sqlparser.Preview(body))
	} else {
		st.ast = ast
		st.Params = len(bindVars)
		r.classify(st, ast)
	}
	if st.Kind == KindShow {
		st.SessionDependent = readsDiagnostics(body)
	}
	if err != nil {
		return st
	}
	if st.ParseErr == nil && r.time != nil {
		st.time, st.RouteErr = r.time.analyze(st)
	}
	return st
}

func previewKind(t sqlparser.StatementType) Kind {
	switch t {
	case sqlparser.StmtSelect:
		return KindSelect
	case sqlparser.StmtInsert, sqlparser.StmtReplace:
		return KindInsert
	case sqlparser.StmtUpdate:
		return KindUpdate
	case sqlparser.StmtDelete:
		return KindDelete
	case sqlparser.StmtDDL:
		return KindDDL
	case sqlparser.StmtBegin:
		return KindBegin
	case sqlparser.StmtCommit:
		return KindCommit
	case sqlparser.StmtRollback:
		return KindRollback
	case sqlparser.StmtShow:
		return KindShow
	}
	// SET and USE that the parser could not read are left as OTHER: obroute cannot record state
	// it cannot read, and the server will report the error.
	return KindOther
}

func (r *Router) classify(st *Statement, ast sqlparser.Statement) {
	switch n := ast.(type) {
	case *sqlparser.Select, *sqlparser.Union:
		st.Kind = KindSelect
	case *sqlparser.Insert:
		st.Kind = KindInsert
	case *sqlparser.Update:
		st.Kind = KindUpdate
	case *sqlparser.Delete:
		st.Kind = KindDelete
	case *sqlparser.Set:
		st.Kind = KindSet
		classifySet(st, n)
		return
	case *sqlparser.Use:
		st.Kind = KindUse
		st.Database = n.DBName.String()
		return
	case *sqlparser.Begin:
		st.Kind = KindBegin
		for _, m := range n.TxAccessModes {
			if m == sqlparser.ReadOnly {
				st.ReadOnly = true
			}
		}
		return
	case *sqlparser.Commit:
		st.Kind = KindCommit
		return
	case *sqlparser.Rollback:
		st.Kind = KindRollback
		return
	case *sqlparser.Show:
		st.Kind = KindShow
	case *sqlparser.CreateTable:
		st.Kind = KindDDL
		if n.Temp {
			st.TempTableCreated = strings.ToLower(n.Table.Name.String())
		}
	case *sqlparser.DropTable:
		st.Kind = KindDDL
		if n.Temp {
			for _, t := range n.FromTables {
				st.TempTablesDropped = append(st.TempTablesDropped, strings.ToLower(t.Name.String()))
			}
		}
	case sqlparser.DDLStatement:
		st.Kind = KindDDL
	}
	st.Tables = statementTables(ast)
	if st.Kind == KindSelect || st.Kind == KindOther {
		st.SessionDependent = st.SessionDependent || callsSessionFunction(ast)
	}
}

// statementTables lists the base tables ast names, lower case and unqualified.
func statementTables(ast sqlparser.Statement) []string {
	var tables []string
	add := func(name sqlparser.TableName) {
		if name.IsEmpty() {
			return
		}
		t := strings.ToLower(name.Name.String())
		for _, seen := range tables {
			if seen == t {
				return
			}
		}
		tables = append(tables, t)
	}
	if ddl, ok := ast.(sqlparser.DDLStatement); ok {
		add(ddl.GetTable())
		for _, t := range ddl.GetFromTables() {
			add(t)
		}
		for _, t := range ddl.GetToTables() {
			add(t)
		}
	}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if n, ok := node.(*sqlparser.AliasedTableExpr); ok {
			if name, ok := n.Expr.(sqlparser.TableName); ok {
				add(name)
			}
		}
		return true, nil
	}, ast)
	return tables
}

// sessionFunctions are the functions whose result belongs to the previous statement's server session.
var sessionFunctions = map[string]bool{"found_rows": true, "row_count": true, "last_insert_id": true}

func callsSessionFunction(ast sqlparser.Statement) bool {
	found := false
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *sqlparser.FuncExpr:
			if sessionFunctions[n.Name.Lowered()] {
				found = true
			}
		case *sqlparser.Variable:
			// @@identity and @@last_insert_id are the same as LAST_INSERT_ID().
			if name := n.Name.Lowered(); name == "identity" || name == "last_insert_id" {
				found = true
			}
		}
		return !found, nil
	}, ast)
	return found
}

// errSetPlaceholder refuses SET statements with ? placeholders: the client session replays SET
// text on other server sessions, where the arguments would be gone.
var errSetPlaceholder = errors.New("obroute: SET with ? placeholders cannot be recorded as session state; write the value into the statement")

func classifySet(st *Statement, n *sqlparser.Set) {
	if st.Params > 0 {
		st.ParseErr = errSetPlaceholder
		return
	}
	text := strings.TrimSpace(st.SQL[hint.StatementStart(st.SQL):])
	lower := strings.ToLower(text)
	// SET TRANSACTION without a scope applies to the next transaction only.
	if strings.HasPrefix(lower, "set transaction") {
		st.NextTransaction = text
		return
	}
	if strings.HasPrefix(lower, "set session transaction") || strings.HasPrefix(lower, "set local transaction") {
		st.Vars = append(st.Vars, SessionVar{Name: "transaction", Assignment: text, Standalone: true})
		return
	}
	for _, e := range n.Exprs {
		v := e.Var
		switch v.Scope {
		case sqlparser.GlobalScope, sqlparser.PersistSysScope, sqlparser.PersistOnlySysScope:
			st.GlobalSet = true
			continue
		}
		name := v.Name.Lowered()
		if v.Scope == sqlparser.VariableScope {
			name = "@" + name
		}
		switch name {
		case "charset", "character set", "character_set":
			name = "names"
		}
		assignment := sqlparser.String(e)
		if name == "names" {
			assignment = strings.TrimPrefix(assignment, "NAMES ")
			assignment = "NAMES " + assignment
		}
		sv := SessionVar{Name: name, Assignment: assignment}
		if lit, ok := e.Expr.(*sqlparser.Literal); ok {
			sv.Value = strings.ToLower(lit.Val)
		} else if col, ok := e.Expr.(*sqlparser.ColName); ok {
			sv.Value = col.Name.Lowered() // SET autocommit = ON parses ON as a column name
		} else if b, ok := e.Expr.(sqlparser.BoolVal); ok {
			if b {
				sv.Value = "1"
			} else {
				sv.Value = "0"
			}
		}
		st.Vars = append(st.Vars, sv)
	}
}

// LogText is the statement text for logs, observers and EXPLAIN ROUTE: the SQL itself, except
// that a statement that may carry a password has every string literal replaced by '***'.
func (st *Statement) LogText() string {
	if st.logText != "" {
		return st.logText
	}
	return st.SQL
}

// parseProblem says why the statement could not be parsed, without quoting a statement that may
// carry a password (the parser's message quotes the text near the error).
func (st *Statement) parseProblem() string {
	if st.logText != "" {
		return "the statement could not be parsed"
	}
	return st.ParseErr.Error()
}

// maskSecrets returns sql with its string literals masked when it may carry a password, "" when
// it may not.
func maskSecrets(sql string) string {
	upper := strings.ToUpper(sql)
	if !strings.Contains(upper, "IDENTIFIED") && !strings.Contains(upper, "PASSWORD") {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c != '\'' && c != '"' {
			b.WriteByte(c)
			continue
		}
		// Skip the literal: a doubled quote or a backslash escapes the next character.
		for i++; i < len(sql); i++ {
			if sql[i] == '\\' {
				i++
			} else if sql[i] == c {
				if i+1 < len(sql) && sql[i+1] == c {
					i++
					continue
				}
				break
			}
		}
		b.WriteString("'***'")
	}
	return b.String()
}

// readsDiagnostics reports whether a SHOW statement reads the previous statement's diagnostics:
// SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS / ERRORS.
func readsDiagnostics(show string) bool {
	words := strings.Fields(strings.ToLower(show))
	if len(words) < 2 {
		return false
	}
	switch w := words[1]; {
	case strings.HasPrefix(w, "warnings"), strings.HasPrefix(w, "errors"), strings.HasPrefix(w, "count"):
		return true
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
