package routing

import (
	"strings"
)

// The statements that change a transaction, a lock or a server-side prepared statement are read
// from their words, as the server reads them (MariaDB's manual: COMMIT, ROLLBACK, SAVEPOINT,
// XA, LOCK TABLES, PREPARE, EXECUTE, EXECUTE IMMEDIATE, DEALLOCATE PREPARE, "SQL statements
// that cause an implicit commit"); the parser drops what matters here (COMMIT AND CHAIN is a
// plain COMMIT to it) or does not know the statement (XA, EXECUTE IMMEDIATE, LOCK TABLE).

// Control is what a statement that controls the transaction, locks or server-side prepared
// statements of its session does, beyond its Kind. Statement.Control is nil for every other
// statement.
type Control struct {
	// Chain and Release are the AND [NO] CHAIN and [NO] RELEASE clauses of COMMIT and ROLLBACK:
	// 1 written, -1 written with NO, 0 not written (completion_type decides).
	Chain, Release int8
	// Savepoint is what a KindSavepoint statement does.
	Savepoint SavepointOp
	// XA is what a KindXA statement does.
	XA XAVerb
	// OnePhase is XA COMMIT … ONE PHASE.
	OnePhase bool
	// XidPlain is set for XA START of an xid the server reads whatever its state (one to three
	// parts: strings of at most 64 bytes, then a number), without JOIN or RESUME: the server
	// accepts it outside a transaction and table locks, where the connector may hold it.
	XidPlain bool
	// Lock is what the statement does to the session's table locks.
	Lock LockOp
	// Name is the savepoint's name (KindSavepoint), the prepared statement's (KindPrepare,
	// KindExecute, KindDeallocate), in lower case as the server compares them; for KindXA the
	// xid as written, with blanks between its parts removed.
	Name string
	// Immediate is EXECUTE IMMEDIATE.
	Immediate bool
	// Using is set when EXECUTE has a USING clause.
	Using bool
	// Text is the text PREPARE … FROM and EXECUTE IMMEDIATE prepare, when it is a string
	// literal; TextVar the user variable (as SessionVar names it: "@name") when it is one; both empty
	// when it is another expression, which obroute cannot read.
	Text    string
	TextVar string
	// Prepared is the analysis of Text ("" Text: nil).
	Prepared *Statement
}

// SavepointOp is what a savepoint statement does.
type SavepointOp uint8

// Savepoint statements.
const (
	SavepointSet        SavepointOp = iota + 1 // SAVEPOINT name
	SavepointRelease                           // RELEASE SAVEPOINT name
	SavepointRollbackTo                        // ROLLBACK [WORK] TO [SAVEPOINT] name
)

// XAVerb is the verb of an XA statement.
type XAVerb uint8

// XA statements.
const (
	XAStart    XAVerb = iota + 1 // XA START|BEGIN xid [JOIN|RESUME]
	XAEnd                        // XA END xid [SUSPEND [FOR MIGRATE]]
	XAPrepare                    // XA PREPARE xid
	XACommit                     // XA COMMIT xid [ONE PHASE]
	XARollback                   // XA ROLLBACK xid
	XARecover                    // XA RECOVER [FORMAT = …]
)

// LockOp is what a statement does to the table locks of its session.
type LockOp uint8

// Lock statements.
const (
	LockTables  LockOp = iota + 1 // LOCK TABLE[S] …: locks the tables named, releasing the session's other table locks
	UnlockTable                   // UNLOCK TABLE[S]: releases the table locks and the global read lock
	LockRead                      // FLUSH [LOCAL] TABLE[S] [names] WITH READ LOCK, FLUSH [LOCAL] TABLE[S] names FOR EXPORT: a read lock (on the tables, else on the server) held until UNLOCK TABLES
)

// classifyControl reads the statements of control that the parser cannot read as the server
// does (see above) from their words, toks[0] being the first. It reports whether it classified
// the statement; st is then complete but for its Tables, which none of them names.
func (r *Router) classifyControl(st *Statement, toks []token, body string) bool {
	rest := toks
	if n := len(rest); n > 0 && rest[n-1].kind == tokPunct && rest[n-1].text == ";" {
		rest = rest[:n-1]
	}
	if len(rest) == 0 || rest[0].kind != tokWord {
		return false
	}
	switch strings.ToLower(rest[0].text) {
	case "commit":
		return completion(st, KindCommit, rest[1:])
	case "rollback":
		words := rest[1:]
		if len(words) > 0 && words[0].is("work") {
			words = words[1:]
		}
		if len(words) > 0 && words[0].is("to") {
			words = words[1:]
			if len(words) > 0 && words[0].is("savepoint") {
				words = words[1:]
			}
			return savepoint(st, SavepointRollbackTo, words)
		}
		return completion(st, KindRollback, rest[1:])
	case "savepoint":
		return savepoint(st, SavepointSet, rest[1:])
	case "release":
		if len(rest) > 1 && rest[1].is("savepoint") {
			return savepoint(st, SavepointRelease, rest[2:])
		}
	case "xa":
		return classifyXA(st, rest[1:], body)
	case "prepare":
		// PREPARE name FROM text
		if len(rest) < 4 || !rest[2].is("from") {
			return false
		}
		name, ok := identName(rest[1])
		if !ok {
			return false
		}
		st.Kind = KindPrepare
		st.Control = &Control{Name: strings.ToLower(name)}
		r.preparedText(st.Control, rest[3:])
		return true
	case "execute":
		if len(rest) > 2 && rest[1].is("immediate") {
			st.Kind = KindExecute
			c := &Control{Immediate: true}
			st.Control = c
			text := rest[2:]
			for i, t := range text {
				if t.is("using") {
					c.Using, text = true, text[:i]
					break
				}
			}
			r.preparedText(c, text)
			return true
		}
		if len(rest) < 2 {
			return false
		}
		name, ok := identName(rest[1])
		if !ok || len(rest) > 2 && !rest[2].is("using") {
			return false
		}
		st.Kind = KindExecute
		st.Control = &Control{Name: strings.ToLower(name), Using: len(rest) > 2}
		return true
	case "deallocate", "drop":
		// DEALLOCATE PREPARE name, DROP PREPARE name
		if len(rest) != 3 || !rest[1].is("prepare") {
			return false
		}
		name, ok := identName(rest[2])
		if !ok {
			return false
		}
		st.Kind = KindDeallocate
		st.Control = &Control{Name: strings.ToLower(name)}
		return true
	}
	return false
}

// setStatementSavepoint returns, for SET STATEMENT … FOR a savepoint statement, that statement's
// Control (Savepoint and Name), which the server runs as it would run it alone; nil for any
// other statement.
func (r *Router) setStatementSavepoint(toks []token, body string) *Control {
	if lowerWord(toks, 0) != "set" || lowerWord(toks, 1) != "statement" {
		return nil
	}
	i := topLevelWord(toks, "for")
	if i < 0 {
		return nil
	}
	var inner Statement
	if !r.classifyControl(&inner, toks[i+1:], body) || inner.Kind != KindSavepoint {
		return nil
	}
	return inner.Control
}

// completion reads the clauses of COMMIT or ROLLBACK: [WORK] [AND [NO] CHAIN] [[NO] RELEASE].
func completion(st *Statement, kind Kind, words []token) bool {
	if len(words) > 0 && words[0].is("work") {
		words = words[1:]
	}
	var c Control
	if len(words) > 0 && words[0].is("and") {
		switch {
		case len(words) > 1 && words[1].is("chain"):
			c.Chain, words = 1, words[2:]
		case len(words) > 2 && words[1].is("no") && words[2].is("chain"):
			c.Chain, words = -1, words[3:]
		default:
			return false
		}
	}
	switch {
	case len(words) > 0 && words[0].is("release"):
		c.Release, words = 1, words[1:]
	case len(words) > 1 && words[0].is("no") && words[1].is("release"):
		c.Release, words = -1, words[2:]
	}
	if len(words) > 0 {
		return false // not COMMIT's syntax: the server will say so
	}
	st.Kind = kind
	if c != (Control{}) {
		st.Control = &c
	}
	return true
}

// savepoint reads the name of a savepoint statement.
func savepoint(st *Statement, op SavepointOp, words []token) bool {
	if len(words) != 1 {
		return false
	}
	name, ok := identName(words[0])
	if !ok {
		return false
	}
	st.Kind = KindSavepoint
	st.Control = &Control{Savepoint: op, Name: strings.ToLower(name)}
	return true
}

// xaVerbs are the verbs of XA statements.
var xaVerbs = map[string]XAVerb{"start": XAStart, "begin": XAStart, "end": XAEnd, "prepare": XAPrepare, "commit": XACommit, "rollback": XARollback, "recover": XARecover}

// classifyXA reads an XA statement: its verb, its xid and ONE PHASE.
func classifyXA(st *Statement, words []token, body string) bool {
	if len(words) == 0 {
		return false
	}
	verb, ok := xaVerbs[strings.ToLower(words[0].text)]
	if !ok || words[0].kind != tokWord {
		return false
	}
	c := &Control{XA: verb}
	words = words[1:]
	if verb != XARecover {
		// The xid: gtrid [, bqual [, formatID]], up to the verb's trailing words.
		end := len(words)
		for i, t := range words {
			if t.kind == tokWord && i > 0 && words[i-1].text != "," {
				end = i
				break
			}
		}
		if end == 0 {
			return false
		}
		var b strings.Builder
		for _, t := range words[:end] {
			b.WriteString(body[t.pos:t.end])
		}
		c.Name = b.String()
		tail := words[end:]
		if verb == XACommit && len(tail) == 2 && tail[0].is("one") && tail[1].is("phase") {
			c.OnePhase = true
		}
		c.XidPlain = verb == XAStart && len(tail) == 0 && plainXid(words[:end])
	}
	st.Kind = KindXA
	st.Control = c
	return true
}

// plainXid reports whether words are an xid MariaDB reads: gtrid [, bqual [, formatID]], the
// first two string literals of at most 64 bytes, the last a number.
func plainXid(words []token) bool {
	if len(words)%2 == 0 || len(words) > 5 {
		return false
	}
	for i, t := range words {
		switch {
		case i%2 == 1:
			if t.kind != tokPunct || t.text != "," {
				return false
			}
		case i == 4:
			if t.kind != tokNumber || strings.Trim(t.text, "0123456789") != "" {
				return false
			}
		case t.kind != tokString || t.national || t.text[0] != '\'' || len(t.val) > 64:
			return false
		}
	}
	return true
}

// preparedText reads the text of PREPARE … FROM and EXECUTE IMMEDIATE: a string literal, whose
// analysis it keeps, or a user variable.
func (r *Router) preparedText(c *Control, text []token) {
	if len(text) != 1 {
		return
	}
	switch t := text[0]; {
	case t.kind == tokString && !t.national:
		c.Text = t.val
		c.Prepared = r.Analyze(t.val)
	case t.kind == tokVar && !strings.HasPrefix(t.val, "@@"):
		c.TextVar = t.val
	}
}

// readLocks reads what a statement that the parser read, or whose tables were scanned, does to
// table locks: LOCK TABLE[S], UNLOCK TABLE[S], and FLUSH [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S]
// [names] WITH READ LOCK [AND DISABLE CHECKPOINT] / FOR EXPORT, in each spelling MariaDB takes.
func readLocks(toks []token) LockOp {
	first := lowerWord(toks, 0)
	i := 1
	if w := lowerWord(toks, 1); first == "flush" && (w == "local" || w == "no_write_to_binlog") {
		i = 2
	}
	if w := lowerWord(toks, i); w != "table" && w != "tables" {
		return 0
	}
	switch first {
	case "lock":
		return LockTables
	case "unlock":
		return UnlockTable
	case "flush":
		// WITH and FOR are reserved words: unquoted, they name no table of the list.
		for j := i + 1; j < len(toks); j++ {
			switch lowerWord(toks, j) {
			case "with":
				if lowerWord(toks, j+1) == "read" && lowerWord(toks, j+2) == "lock" {
					return LockRead
				}
			case "for":
				if lowerWord(toks, j+1) == "export" {
					return LockRead
				}
			}
		}
	}
	return 0
}

// commitsBefore reports whether the statement of toks commits an open transaction before it runs,
// as MariaDB's manual lists them and MariaDB 10.11 does: DDL but on temporary tables (CREATE and
// DROP TEMPORARY TABLE; ALTER TABLE commits even on one, and so does CREATE TEMPORARY SEQUENCE),
// CREATE/DROP FUNCTION of a UDF and DROP PREPARE, ANALYZE, CHECK, OPTIMIZE and REPAIR TABLE,
// FLUSH, GRANT, REVOKE, RENAME, RESET, SET PASSWORD, SET DEFAULT ROLE, LOCK TABLES, BACKUP,
// CHANGE MASTER, START and STOP SLAVE, SHUTDOWN, TRUNCATE, and SET STATEMENT … FOR one of them.
// BEGIN, SET autocommit and UNLOCK TABLES commit under conditions the client session knows (see
// the connector); CHECKSUM TABLE, CACHE INDEX and LOAD INDEX INTO CACHE do not commit (the
// manual lists the last two; the server does not). DROP FUNCTION counts as committing: a stored
// function's does, a UDF's does not, and the words do not tell which.
func commitsBefore(toks []token) bool {
	w2 := lowerWord(toks, 1)
	switch lowerWord(toks, 0) {
	case "alter", "analyze", "backup", "flush", "grant", "optimize", "rename", "repair", "reset", "revoke", "shutdown", "truncate":
		return true
	case "create":
		i := 1
		if w2 == "or" {
			i = 3 // OR REPLACE
		}
		if lowerWord(toks, i) == "temporary" && lowerWord(toks, i+1) == "table" {
			return false
		}
		for _, t := range toks {
			if t.is("soname") {
				return false // CREATE [AGGREGATE] FUNCTION … SONAME '…': a UDF
			}
		}
		return true
	case "drop":
		return w2 != "temporary" && w2 != "prepare"
	case "check":
		return w2 == "table" || w2 == "tables" || w2 == "view"
	case "lock":
		return w2 == "table" || w2 == "tables"
	case "start", "stop":
		return w2 == "slave" || w2 == "replica" || w2 == "all"
	case "change":
		return w2 == "master" || w2 == "replication"
	case "set":
		switch w2 {
		case "password":
			return true
		case "default":
			return lowerWord(toks, 2) == "role"
		case "statement":
			// SET STATEMENT assignments FOR statement: as the statement.
			if i := topLevelWord(toks, "for"); i > 0 {
				return commitsBefore(toks[i+1:])
			}
		}
	}
	return false
}

// lowerWord returns toks[i] in lower case when it is an unquoted word, else "".
//
//go:noinline
func lowerWord(toks []token, i int) string {
	if i < len(toks) && toks[i].kind == tokWord {
		return strings.ToLower(toks[i].text)
	}
	return ""
}

// topLevelWord returns the index of the first word w of toks outside parentheses, -1 when none.
func topLevelWord(toks []token, w string) int {
	depth := 0
	for i, t := range toks {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		case depth == 0 && t.is(w):
			return i
		}
	}
	return -1
}

// invisible reports whether the statement of toks may change its session's state where obroute
// cannot follow it: CALL; SET STATEMENT … FOR a statement that changes session state (a SET,
// a transaction's statement, locks, a prepared statement, a temporary table, CALL), which the
// server runs as it would run it alone; SET ROLE; and a SET that classifySet could not read as
// session state (it reaches here only then): a spelling of an assignment it does not know.
func invisible(toks []token) bool {
	switch lowerWord(toks, 0) {
	case "call":
		return true
	case "set":
		switch lowerWord(toks, 1) {
		case "password":
			return false // the account's, not the session's
		case "default":
			return lowerWord(toks, 2) != "role" // SET DEFAULT ROLE: the account's
		case "statement":
		default:
			return true
		}
		i := topLevelWord(toks, "for")
		if i < 0 {
			return false
		}
		inner := toks[i+1:]
		switch lowerWord(inner, 0) {
		case "set", "use", "begin", "start", "commit", "rollback", "savepoint", "release", "xa", "lock", "unlock",
			"prepare", "execute", "deallocate", "call", "handler":
			return true
		case "create", "drop":
			return lowerWord(inner, 1) == "temporary" || lowerWord(inner, 3) == "temporary" || lowerWord(inner, 1) == "prepare"
		}
	}
	return false
}

// userLockFunctions are the functions of MariaDB's user-level locks, which live in the server
// session that takes them.
var userLockFunctions = map[string]bool{"get_lock": true, "release_lock": true, "release_all_locks": true, "is_free_lock": true, "is_used_lock": true}

// callsUserLocks reports whether the statement calls a user-level lock function.
func callsUserLocks(toks []token) bool {
	for i, t := range toks {
		if t.kind == tokWord && i+1 < len(toks) && toks[i+1].text == "(" && userLockFunctions[strings.ToLower(t.text)] {
			return true
		}
	}
	return false
}
