package routing

import (
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

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
	KindSavepoint                // SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT (Control says which)
	KindXA                       // XA START, END, PREPARE, COMMIT, ROLLBACK, RECOVER (Control.XA)
	KindPrepare                  // PREPARE name FROM text (SQL-level prepared statement)
	KindExecute                  // EXECUTE name [USING …], EXECUTE IMMEDIATE text [USING …]
	KindDeallocate               // DEALLOCATE PREPARE name, DROP PREPARE name
)

var kindNames = [...]string{"OTHER", "SELECT", "INSERT", "UPDATE", "DELETE", "DDL", "SET", "USE", "BEGIN", "COMMIT", "ROLLBACK", "SHOW", "EXPLAIN_ROUTE",
	"SAVEPOINT", "XA", "PREPARE", "EXECUTE", "DEALLOCATE"}

// String returns the kind's upper-case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IsDML reports whether the kind is a data manipulation statement (SELECT, INSERT, UPDATE, DELETE).
func (k Kind) IsDML() bool { return k >= KindSelect && k <= KindDelete }

// IsWrite reports whether the kind is INSERT, UPDATE or DELETE.
func (k Kind) IsWrite() bool { return k >= KindInsert && k <= KindDelete }

// SessionVar is one assignment of a SET statement, kept by the client session and re-applied to
// server sessions that are behind.
type SessionVar struct {
	// Name identifies the variable: a lower-case system variable name without scope ("time_zone"),
	// "@name" for a user variable, "names" for SET NAMES / CHARACTER SET / CHARSET. SET SESSION
	// TRANSACTION gives "tx_isolation" and/or "tx_read_only", the variables it sets.
	Name string
	// Assignment is the SQL text of the assignment as it can stand in a SET list, e.g.
	// "time_zone = '+08:00'", "NAMES utf8mb4"; for SET SESSION TRANSACTION, the statement's
	// text (the client session records the values it reads back instead).
	Assignment string
	// Value is the assigned literal in lower case when it is a simple literal ("0", "on",
	// "+08:00") that means the same replayed on any server session, else "": the value is
	// then read back (an expression, DEFAULT, a user variable's string, whose character set is
	// the connection's, a string that sql_mode reads in more than one way).
	Value string
}

// TableRename is one rename of a DDL statement: table From (lower case) becomes To.
type TableRename struct {
	From, To string
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
	// TempTablesDropped are the tables a DROP [TEMPORARY] TABLE drops, lower case: DROP TABLE t
	// drops the temporary table t when there is one (only it, not a permanent t as well), so
	// the client session forgets those of them it holds as temporary tables.
	TempTablesDropped []string
	// TablesRenamed are the renames of an ALTER TABLE … RENAME [TO|AS] or RENAME TABLE a TO b
	// [, c TO d …], in the order the server makes them: the client session moves those of its
	// temporary tables to their new names (MariaDB renames temporary tables too).
	TablesRenamed []TableRename
	// SessionDependent marks statements whose meaning depends on the previous statement's server
	// session: FOUND_ROWS(), ROW_COUNT(), LAST_INSERT_ID(), SHOW WARNINGS, SHOW ERRORS,
	// @@warning_count … (SessionReads says which).
	SessionDependent bool
	// SessionReads are the session functions the statement reads.
	SessionReads SessionReads
	// SetsInsertID marks a statement calling LAST_INSERT_ID(expr): the value LAST_INSERT_ID()
	// returns next is on the server session it runs on.
	SetsInsertID bool
	// ConsistentSnapshot marks START TRANSACTION WITH CONSISTENT SNAPSHOT, whose reads are as
	// of the START.
	ConsistentSnapshot bool
	// UserVars are the user variables a statement other than SET assigns (@v := …, INTO @v), by
	// name in lower case: their values are read back after it ran, so that a server session
	// replacing a lost one, or another backend's, gets them.
	UserVars []string
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
	// CommitsTx marks a statement that commits an open transaction before it runs, even when it
	// fails: DDL other than on temporary tables, LOCK TABLES, FLUSH, GRANT … (see commitsBefore).
	CommitsTx bool
	// UserLocks marks a statement that calls a user-level lock function (GET_LOCK, RELEASE_LOCK,
	// RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK).
	UserLocks bool
	// Invisible marks a statement whose effect on its server session obroute cannot see: CALL of
	// a stored procedure, which may set session variables, create temporary tables, open or end a
	// transaction.
	Invisible bool
	// Control is what a statement that controls transactions, locks or SQL-level prepared
	// statements does (COMMIT … AND CHAIN, SAVEPOINT, XA, LOCK TABLES, PREPARE …); nil for the
	// others.
	Control *Control
	// Explained is the statement that EXPLAIN ROUTE explains (KindExplainRoute).
	Explained *Statement
	// CommentErr refuses a statement with an executable comment whose version number leaves it
	// to the server's version whether the comment runs (/*M!100600 … */): obroute does not read
	// the statement by the version of the server it reaches.
	CommentErr error
	// ParseErr is set when the parser could not read the statement. The statement still runs
	// (obroute never blocks valid SQL of the backend) unless it names a routed table it cannot
	// be routed by: by the static routes of the tables it names, else by the cached-server rule.
	ParseErr error
	// Params is the number of ? placeholders in the statement.
	Params int
	// RouteErr refuses the statement: it breaks a time-routing rule (a function on the shard key,
	// a join of two time-sharded tables, …). Unlike ParseErr, the statement is never sent.
	RouteErr error

	// logText is SQL with its string literals masked, set when the statement may carry a
	// password (IDENTIFIED BY, PASSWORD(…), SET PASSWORD); see LogText.
	logText string

	// aside are the MariaDB clauses the parser does not know, set aside while it read the rest.
	aside []asideClause
	// scanned marks a statement whose tables come from obroute's lexer, not from the parser:
	// one the parser could not read, or of a kind whose syntax tree does not list its tables.
	// mentions are the routed tables it names elsewhere than where a table stands.
	scanned  bool
	mentions []string
	// systemTables are the tables it names qualified by a system schema (information_schema,
	// performance_schema, mysql, sys), lower case: they describe the server they run on.
	systemTables []string
	// shadowReads are what the statement says of the column values of the shadow tables with
	// column algorithms it names (see shadow_read.go).
	shadowReads []*tableRead
	// loadsRows marks LOAD DATA: rows whose values the statement does not show.
	loadsRows bool
	// execWhy names an executable comment whose reading depends on the server (see
	// execComments); a shadow table's values are not read from such a statement.
	execWhy string
	time    *timeStatement // time-sharding analysis, nil when no time-sharded table is involved
	// ddl is the DDL statement as read from its words (see ddl.go), nil for other statements.
	ddl *ddlForm
	// catalog is the catalog statement read (see catalog.go), nil for other statements;
	// catalogErr refuses a catalog statement obroute cannot answer for the logical tables.
	catalog    *catalogForm
	catalogErr error
	// bareView is an information_schema table a SELECT names without its database (see
	// UnqualifiedCatalog).
	bareView string
	// explainOf is the statement a plain EXPLAIN or ANALYZE explains (see explain_plain.go), and
	// explainAt where it starts in SQL.
	explainOf *Statement
	explainAt int
	// pieces are the statements of a text of several, each analysed alone (see multi.go); the
	// text's own Kind is then KindOther.
	pieces []*Statement
	// multiWhy, on a statement of such a text, says why it cannot run inside the text (see
	// multiProblem); "" when it can.
	multiWhy string

	// lits are the literals of SQL its cache key replaced, when the analysis is the one of the
	// normalized text and reads them as arguments (see normalize.go); litSlots are their
	// placeholder indexes in that text, shared by every statement of the key.
	lits     []literal
	litSlots []int32
}

// analyze classifies sql. It never fails: what it cannot parse is marked with ParseErr.
// litSlots are the placeholders of sql that stand for literals (a normalized text), nil for a
// text as the application wrote it.
func (r *Router) analyze(sql string, litSlots []int32) *Statement {
	st := &Statement{SQL: sql, logText: maskSecrets(sql), litSlots: litSlots}
	hints, _, err := hint.ParseLeading(sql)
	st.Hints, st.HintErr = hints, err
	body := sql[hint.StatementStart(sql):]
	body, st.execWhy = execComments(body)
	toks, lexed := lex(body)
	if d := dependentComment(body); d != "" {
		st.CommentErr = errorf("%w: the executable comment %s … */ runs or not by the version of the server, which obroute does not read the statement by; write its content as plain SQL, or drop the comment", ErrUnreadable, d)
		return st
	}
	if at := explainRouteAt(toks, lexed); at >= 0 {
		st.Kind = KindExplainRoute
		st.Explained = r.analyzeText(strings.TrimSpace(body[at:]))
		return st
	}
	st.Params = countParams(toks)
	if len(toks) > 0 && toks[0].is("show") {
		st.SessionReads = readsDiagnostics(body)
	} else {
		st.SessionReads = sessionReads(toks)
	}
	st.SessionDependent = st.SessionReads != 0
	st.SetsInsertID = callsSetInsertID(toks)
	for i := 0; i+1 < len(toks) && len(toks) > 0 && toks[0].is("start"); i++ {
		if toks[i].is("consistent") && toks[i+1].is("snapshot") {
			st.ConsistentSnapshot = true
		}
	}
	if at := plainExplainAt(toks, lexed); at >= 0 && r.time != nil {
		if inner := r.analyzeText(strings.TrimSpace(body[at:])); inner.time != nil || inner.namesTimeTable(r) {
			st.explainOf, st.explainAt = inner, hint.StatementStart(sql)+at
			st.Tables, st.UserVars = inner.Tables, inner.UserVars
			return st
		}
	}
	pieces := statementPieces(body, toks, lexed)
	if pieces != nil && len(r.roles) > 1 {
		st.pieces = make([]*Statement, len(pieces))
		for i, piece := range pieces {
			st.pieces[i] = r.analyze(piece, nil)
			st.pieces[i].multiWhy = multiProblem(st.pieces[i])
			for _, t := range st.pieces[i].Tables {
				st.Tables = appendNew(st.Tables, t)
			}
		}
		return st
	}
	// A SET is session state only alone: with one backend a text of several statements is sent
	// as it is, and a SET in it is not recorded (its "assignment" would hold the statements
	// after it, replayed on every new server session).
	if pieces == nil && len(toks) > 0 && toks[0].is("set") && classifySet(st, toks, body) {
		if st.Kind == KindSet && wordsHoldSubquery(toks) {
			// Its tables are read from its words: it is routed by them (setRoute).
			r.scanTables(st, toks, lexed)
			if lexed {
				r.readCatalog(st, toks, hint.StatementStart(sql), body) // refuses one reading information_schema
			}
		}
		return st
	}
	if pieces == nil && lexed && r.classifyControl(st, toks, body) {
		return st
	}
	p, err := parse(body, toks)
	if err != nil {
		if stripped, aside := setAside(body, toks); aside != nil {
			if q, err2 := parse(stripped, nil); err2 == nil && asideFits(aside, q.ast) {
				p, err, st.aside = q, nil, aside
			}
		}
	}
	if err != nil {
		st.ParseErr = err
		st.Kind, st.ReadOnly = previewKind(toks)
		r.scanTables(st, toks, lexed)
		st.RouteErr = r.handlerAlias(st, toks)
	} else {
		r.classify(st, p.ast, toks, lexed)
	}
	if lexed {
		start := hint.StatementStart(sql)
		if d := readDDL(toks, start); d != nil {
			r.useDDL(st, d, toks)
		}
		r.readCatalog(st, toks, start, body)
	}
	if st.Kind != KindSet {
		st.UserVars = assignedUserVars(toks)
	}
	st.systemTables = systemQualified(toks)
	if st.RouteErr == nil && len(toks) > 0 && (toks[0].is("create") || toks[0].is("alter")) && compoundStart(toks) {
		st.RouteErr = r.programTables(st, toks)
	}
	st.CommitsTx = commitsBefore(toks)
	st.UserLocks = callsUserLocks(toks)
	st.Invisible = invisible(toks)
	if lock := readLocks(toks); lock != 0 {
		st.Control = &Control{Lock: lock}
	} else if c := r.setStatementSavepoint(toks, body); c != nil {
		st.Control = c
	}
	if st.ParseErr != nil || st.scanned {
		return st
	}
	if r.time != nil {
		st.time, st.RouteErr = r.time.analyze(st, p)
	}
	if r.shadowColumnTables != nil {
		st.shadowReads = r.shadowReads(st, p)
	}
	return st
}

// previewKind classifies a statement the parser could not read by its first words, and says
// whether it starts a read-only transaction.
func previewKind(toks []token) (Kind, bool) {
	i := 0
	for i < len(toks) && toks[i].kind == tokPunct && toks[i].text == "(" {
		i++
	}
	if i >= len(toks) || toks[i].kind != tokWord {
		return KindOther, false
	}
	rest := toks[i+1:]
	if n := len(rest); n > 0 && rest[n-1].text == ";" {
		rest = rest[:n-1]
	}
	alone := len(rest) == 0 || len(rest) == 1 && rest[0].is("work")
	switch w := strings.ToLower(toks[i].text); w {
	case "select":
		return KindSelect, false
	case "insert", "replace":
		return KindInsert, false
	case "update":
		return KindUpdate, false
	case "delete":
		return KindDelete, false
	case "create", "alter", "rename", "drop", "truncate":
		return KindDDL, false
	case "show":
		return KindShow, false
	case "begin":
		if alone {
			return KindBegin, false
		}
	case "start":
		if len(rest) > 0 && rest[0].is("transaction") {
			for j := 1; j+1 < len(rest); j++ {
				if rest[j].is("read") && rest[j+1].is("only") {
					return KindBegin, true
				}
			}
			return KindBegin, false
		}
	case "commit":
		if alone {
			return KindCommit, false
		}
	case "rollback":
		if alone {
			return KindRollback, false
		}
	}
	// SET and USE that could not be read are left as OTHER: obroute cannot record state it
	// cannot read, and the server will report the error.
	return KindOther, false
}

func (r *Router) classify(st *Statement, ast sqlparser.Statement, toks []token, lexed bool) {
	switch n := ast.(type) {
	case *sqlparser.Select, *sqlparser.SetOp, *sqlparser.ParenSelect:
		st.Kind = KindSelect
	case *sqlparser.Insert:
		st.Kind = KindInsert
	case *sqlparser.Update:
		st.Kind = KindUpdate
	case *sqlparser.Delete:
		st.Kind = KindDelete
	case *sqlparser.Set:
		// Read by classifySet from the statement's own words; one that it cannot read is not
		// recorded as session state.
		return
	case *sqlparser.Use:
		st.Kind = KindUse
		st.Database = n.DBName.String()
		return
	case *sqlparser.Begin:
		st.Kind = KindBegin
		st.ReadOnly = strings.Contains(strings.ToLower(n.TransactionCharacteristic), "read only")
		return
	case *sqlparser.Commit:
		st.Kind = KindCommit
		return
	case *sqlparser.Rollback:
		st.Kind = KindRollback
		return
	case *sqlparser.Show:
		st.Kind = KindShow
	case *sqlparser.DDL:
		st.Kind = KindDDL
		if n.Temporary && n.Action == sqlparser.CreateStr {
			st.TempTableCreated = strings.ToLower(n.Table.Name.String())
		}
		if n.Temporary && n.Action == sqlparser.DropStr {
			for _, t := range n.FromTables {
				st.TempTablesDropped = append(st.TempTablesDropped, strings.ToLower(t.Name.String()))
			}
		}
	case *sqlparser.AlterTable, *sqlparser.DBDDL:
		st.Kind = KindDDL
	case *sqlparser.Load:
		st.loadsRows = true
	case *sqlparser.Explain, *sqlparser.LockTables, *sqlparser.UnlockTables,
		*sqlparser.Savepoint, *sqlparser.RollbackSavepoint, *sqlparser.ReleaseSavepoint:
	default:
		// A statement whose syntax tree does not list its tables (ANALYZE, CALL, FLUSH, …):
		// its tables are read from its words.
		r.scanTables(st, toks, lexed)
		return
	}
	st.Tables = statementTables(ast)
}

// appendTable adds name to tables, lower case and unqualified, unless it is
// empty or listed. It is not inlined: statementTables names it at many places.
//
//go:noinline
func appendTable(tables []string, name sqlparser.TableName) []string {
	if name.IsEmpty() {
		return tables
	}
	return appendNew(tables, strings.ToLower(name.Name.String()))
}

// statementTables lists the base tables ast names, lower case and unqualified.
func statementTables(ast sqlparser.Statement) []string {
	var tables []string
	add := func(name sqlparser.TableName) { tables = appendTable(tables, name) }
	var more []sqlparser.SQLNode
	switch n := ast.(type) {
	case *sqlparser.Insert:
		add(n.Table)
	case *sqlparser.DDL:
		for _, t := range n.AffectedTables() {
			add(t)
		}
		if n.OptLike != nil {
			for _, t := range n.OptLike.LikeTables {
				add(t)
			}
		}
		if n.OptSelect != nil {
			more = append(more, n.OptSelect.Select)
		}
	case *sqlparser.AlterTable:
		add(n.Table)
	case *sqlparser.Show:
		add(n.Table)
	case *sqlparser.LockTables:
		for _, t := range n.Tables {
			more = append(more, t.Table)
		}
	case *sqlparser.Explain:
		return statementTables(n.Statement)
	case *sqlparser.Load:
		add(n.Table)
	}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if n, ok := node.(*sqlparser.AliasedTableExpr); ok && n != nil {
			if name, ok := n.Expr.(sqlparser.TableName); ok {
				add(name)
			}
		}
		return true, nil
	}, append(more, ast)...)
	return tables
}
