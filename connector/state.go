package connector

import (
	"context"
	"database/sql/driver"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

var mysqlInvalidConn = mysql.ErrInvalidConn

// A client session keeps its session state in two layers: production's (state), and what
// shadow traffic set (shadowState). A server session of a production backend gets production's
// layer only; one of a shadow backend gets production's layer with the shadow layer over it. So
// shadow traffic sees what production set (the shadow copy mirrors production) plus what shadow
// traffic set itself, and nothing shadow traffic sets ever reaches a production backend.

// sessionState is one layer of a client session's session state: its session variables,
// current database and pending one-shot SET TRANSACTION, versioned so that a server session can
// tell in one comparison whether it is behind.
type sessionState struct {
	version uint64
	// vars holds one assignment per variable, the latest, in the order the client session made
	// them (a variable assigned again moves to the end): replayed in that order, they give the
	// state the client session is in. Variables that set each other (SET NAMES and
	// character_set_client, tx_isolation and SET SESSION TRANSACTION …) are one entry, read back
	// from the server (see canonical).
	vars     []routing.SessionVar
	database string
	// nextTx is a one-shot SET TRANSACTION waiting for the next transaction's backend.
	nextTx string
}

// record adds the assignments of one SET statement, in their order.
func (st *sessionState) record(vars []routing.SessionVar) {
	for _, v := range vars {
		st.vars = slices.DeleteFunc(st.vars, func(old routing.SessionVar) bool { return old.Name == v.Name })
		st.vars = append(st.vars, v)
	}
	st.version++
}

// use records the current database. USE sets the database's character set and collation
// (character_set_database, collation_database): an assignment of them made before is void.
func (st *sessionState) use(db string) {
	st.database = db
	st.vars = slices.DeleteFunc(st.vars, func(v routing.SessionVar) bool { return v.Name == databaseCollation })
	st.version++
}

// sets reports whether the layer assigns the variable name.
func (st *sessionState) sets(name string) bool {
	return st.variable(name) != nil
}

// isShadowBackend reports whether backend is the shadow side of a shadow mapping.
//
//go:noinline
func (c *Connector) isShadowBackend(backend string) bool {
	if c.cfg.Shadow == nil {
		return false
	}
	for _, m := range c.cfg.Shadow.Mappings {
		if m.Shadow == backend {
			return true
		}
	}
	return false
}

// productionOf returns the production backend whose shadow traffic goes to backend; backend
// itself when it is no shadow backend.
func (c *Connector) productionOf(backend string) string {
	if c.cfg.Shadow != nil {
		for _, m := range c.cfg.Shadow.Mappings {
			if m.Shadow == backend {
				return m.Production
			}
		}
	}
	return backend
}

// shadowByHints reports whether st, with the hints of its call, is shadow traffic by a shadow
// hint or by its shadow transaction (a shadow decision by column values is the router's).
func (cs *clientSession) shadowByHints(st *routing.Statement, hints hint.Set) bool {
	if hints.Shadow == hint.ShadowOff || st.Hints.Shadow == hint.ShadowOff {
		return false
	}
	return hints.Shadow == hint.ShadowOn || st.Hints.Shadow == hint.ShadowOn || (cs.tx.backend != "" && cs.tx.shadow)
}

// tempTablesOf returns the temporary tables of shadow traffic (shadow) or production.
func (cs *clientSession) tempTablesOf(shadow bool) map[string]string {
	if shadow {
		return cs.tempTables[1]
	}
	return cs.tempTables[0]
}

// layer returns the session state that statements of shadow traffic (shadow) or of production
// change.
func (cs *clientSession) layer(shadow bool) *sessionState {
	if shadow {
		return &cs.shadowState
	}
	return &cs.state
}

// noSelectLimit is sql_select_limit's default value: no limit.
const noSelectLimit = "18446744073709551615"

// selectLimit returns the sql_select_limit the client session (for shadow traffic, with what
// the shadow layer set) assigned, when it is other than the default: ok is false when none was
// assigned, or the default was.
func (cs *clientSession) selectLimit(shadow bool) (v string, ok bool) {
	layers := []*sessionState{&cs.state}
	if shadow {
		layers = append(layers, &cs.shadowState)
	}
	for _, l := range layers {
		for _, sv := range l.vars {
			if sv.Name == "sql_select_limit" {
				v, ok = sv.Value, sv.Value != noSelectLimit
				if v == "" {
					v = "set (" + sv.Assignment + ")"
				}
			}
		}
	}
	return v, ok
}

// inLine reports whether s has caught up with every layer meant for it.
func (cs *clientSession) inLine(s *serverSession) bool {
	return s.version == cs.state.version && (!s.shadow || s.shadowVersion == cs.shadowState.version)
}

// markInLine records that s has caught up with every layer meant for it.
func (cs *clientSession) markInLine(s *serverSession) {
	s.version, s.shadowVersion = cs.state.version, cs.shadowState.version
	s.refused = ""
}

// database returns the database s must be in, "" for its DSN's.
func (cs *clientSession) database(s *serverSession) string {
	if s.shadow && cs.shadowState.database != "" {
		return cs.physicalDatabase(s, cs.shadowState.database)
	}
	return cs.physicalDatabase(s, cs.state.database)
}

// dsnDatabase returns the database the DSN of s's backend names, "" for none.
func dsnDatabase(s *serverSession) string {
	if s.backend.mysql == nil {
		return ""
	}
	return s.backend.mysql.DBName
}

// physicalDatabase returns the database on s's backend that the client session's database db
// stands for. The client session sees one database, the default backend's (DATABASE() names it
// outside a transaction): each backend holds its tables of it in the database its own DSN
// names, whatever that one is called, so db naming the default backend's DSN database is that
// database on every backend, as USE of it puts one server's session where every table is. Any
// other name is the database of that name on each backend's server.
func (cs *clientSession) physicalDatabase(s *serverSession, db string) string {
	if db == "" {
		return ""
	}
	def := cs.c.backends[cs.c.cfg.Default]
	if def == nil || def.mysql == nil || def.mysql.DBName == "" || db != def.mysql.DBName {
		return db
	}
	if own := dsnDatabase(s); own != "" {
		return own
	}
	return db
}

// wanted returns the assignments s must have, in their order: production's, and on a shadow
// backend the shadow layer's after those of production it does not override.
func (cs *clientSession) wanted(s *serverSession) []routing.SessionVar {
	if !s.shadow || len(cs.shadowState.vars) == 0 {
		return cs.state.vars
	}
	out := make([]routing.SessionVar, 0, len(cs.state.vars)+len(cs.shadowState.vars))
	for _, v := range cs.state.vars {
		if !cs.shadowState.sets(v.Name) {
			out = append(out, v)
		}
	}
	return append(out, cs.shadowState.vars...)
}

// sync brings s up to the client session's session state: its current database first (USE
// sets the database's character set and collation, which an assignment after it may change),
// then the assignments it lacks, in the client session's order, in one SET.
func (cs *clientSession) sync(ctx context.Context, s *serverSession) error {
	if cs.inLine(s) {
		return nil
	}
	if db := cs.database(s); db != "" && db != s.database && (s.database != "" || db != dsnDatabase(s)) {
		use := "USE " + quoteIdent(db)
		if _, err := s.exec(ctx, use, nil, false); err != nil {
			return s.refusal(err, "database", "database "+db, use)
		}
		s.database = db
		s.applied = slices.DeleteFunc(s.applied, func(v routing.SessionVar) bool { return v.Name == databaseCollation })
	}
	if err := s.replay(ctx, cs.wanted(s)); err != nil {
		return err
	}
	cs.markInLine(s)
	return nil
}

// replay gives s the assignments of want it lacks. Each entry of want sets variables no other
// entry sets, to a value that means the same on any server session in any state (see recordSet),
// so what s holds is compared entry by entry, and the others are sent in want's order, in one SET.
// When the server refuses the SET (which then changes nothing), each assignment is tried alone,
// so that the others are applied and the refused one is named in the error; an assignment the
// server refuses although s already has its value (a variable set back to the value s never
// left) counts as applied.
func (s *serverSession) replay(ctx context.Context, want []routing.SessionVar) error {
	var pending []routing.SessionVar
	for _, v := range want {
		if !slices.Contains(s.applied, v) {
			pending = append(pending, v)
		}
	}
	if len(pending) > 1 {
		list := make([]string, len(pending))
		for k, v := range pending {
			list[k] = v.Assignment
		}
		_, err := s.exec(ctx, "SET "+strings.Join(list, ", "), nil, false)
		if err == nil {
			s.applied = slices.Clone(want)
			return nil
		} else if !reachedServer(err) {
			return err
		}
	}
	for k, v := range pending {
		text := "SET " + v.Assignment
		_, err := s.exec(ctx, text, nil, false)
		if err != nil && (!reachedServer(err) || !s.has(ctx, v)) {
			// s holds what it held of want, and the assignments it took.
			s.applied = slices.DeleteFunc(slices.Clone(want), func(w routing.SessionVar) bool {
				i := slices.Index(pending, w)
				return i >= k || i < 0 && !slices.Contains(s.applied, w)
			})
			if !reachedServer(err) {
				return err
			}
			return s.refusal(err, v.Name, "session variable "+strings.TrimPrefix(v.Name, "@"), text)
		}
	}
	s.applied = slices.Clone(want)
	return nil
}

// refusal is the error of a SET or USE that s could not take while catching up: the server's
// answer, named, and remembered so that the client session is not handed out again while it
// stands. A lost connection is returned as it is.
func (s *serverSession) refusal(err error, name, what, text string) error {
	if !reachedServer(err) {
		return err
	}
	s.refused = name
	return errorf("%w: backend %s refused %s (%s), which this client session set on another backend: %w; the statement did not run. Set it back, or to a value backend %s accepts, and run the statement again",
		ErrSessionStateRefused, s.backend.name, what, text, err, s.backend.name)
}

// has reports whether s already holds the value v assigns: it reads the variable back and
// compares it with v's literal (booleans as MySQL reads them). An expression, an entry of
// several variables or a value that cannot be read back is never taken as held.
func (s *serverSession) has(ctx context.Context, v routing.SessionVar) bool {
	if v.Value == "" || strings.Contains(v.Assignment, ",") {
		return false
	}
	text, numeric, err := readValue(ctx, s, v.Name)
	if err != nil {
		return false
	}
	want := v.Value
	if numeric {
		switch want {
		case "on", "true":
			want = "1"
		case "off", "false":
			want = "0"
		}
	}
	return strings.ToLower(text) == want
}

// outOfLine reports whether a server session refused the client session's current state.
func (cs *clientSession) outOfLine() bool {
	for _, s := range cs.servers {
		if s.refused != "" {
			return true
		}
	}
	return false
}

// forgetRefusals drops the refusals of a variable (or "database") the application has just
// assigned again: the new value is tried at the next statement.
func (cs *clientSession) forgetRefusals(name string) {
	for _, s := range cs.servers {
		if s.refused == name {
			s.refused = ""
		}
	}
}

// recordSet keeps the session assignments of a SET that s has just run, in the shadow layer
// for shadow traffic, else in production's. What the server holds after it is what is kept:
// variables that set each other, or that obroute reads (autocommit, completion_type,
// sql_mode), are read back as one entry (see canonical); a value that is an expression, or
// that would mean something else replayed elsewhere (a user variable's string), is recorded
// with the value s holds.
func (cs *clientSession) recordSet(ctx context.Context, s *serverSession, st *routing.Statement, shadow bool) error {
	if len(st.Vars) == 0 {
		return nil
	}
	vars, err := cs.readBackVars(ctx, s, st.Vars)
	if err != nil {
		return err
	}
	cs.recordVars(s, vars, shadow)
	return nil
}

// recordFailedSet keeps what a SET that failed on s left of its user variables: MariaDB creates
// a user variable whose value failed (a subquery of more than one row) as a NULL string, which a
// SELECT @v elsewhere must see as it does there. They are read back from s; if that fails, the
// statement's own error is what the application gets, and they stay as they were recorded.
func (cs *clientSession) recordFailedSet(ctx context.Context, s *serverSession, st *routing.Statement, shadow bool) {
	var user []routing.SessionVar
	for _, v := range st.Vars {
		if strings.HasPrefix(v.Name, "@") {
			user = append(user, routing.SessionVar{Name: v.Name})
		}
	}
	if len(user) == 0 {
		return
	}
	if vars, err := cs.readBackVars(ctx, s, user); err == nil {
		cs.recordVars(s, vars, shadow)
	}
}

// readBackVars returns the entries the assignments of one statement, which s has just run,
// record: each as written, or read back from s (see recordSet), in the order of their last
// assignment. All that is read back is read in one statement, which changes FOUND_ROWS() and
// ROW_COUNT() on s: the values they had before it, which it reads too, are held for the client
// session's next statement.
func (cs *clientSession) readBackVars(ctx context.Context, s *serverSession, assigned []routing.SessionVar) ([]routing.SessionVar, error) {
	type entry struct {
		v, asWritten routing.SessionVar
		canon        *canon
	}
	var entries []entry
	var read []string // what to read back, each once
	for _, v := range assigned {
		e := entry{v: v, asWritten: v, canon: canonical[v.Name]}
		switch {
		case e.canon != nil:
			e.v = routing.SessionVar{Name: e.canon.name}
			for _, name := range e.canon.read {
				if !slices.Contains(read, name) {
					read = append(read, name)
				}
			}
		case v.Value == "":
			if !slices.Contains(read, v.Name) {
				read = append(read, v.Name)
			}
		}
		entries = slices.DeleteFunc(entries, func(old entry) bool { return old.v.Name == e.v.Name })
		entries = append(entries, e)
	}
	lits := map[string]literal{}
	if len(read) > 0 {
		got, found, count, err := readLiterals(ctx, s, read)
		if err != nil {
			return nil, err
		}
		for i, name := range read {
			lits[name] = got[i]
		}
		b := cs.c.productionOf(s.backend.name)
		if f := &cs.funcs; f.foundRows.backend == b && !f.foundRows.held {
			f.foundRows = heldValue(found)
		}
		if f := &cs.funcs; f.rowCount.backend == b && !f.rowCount.held {
			f.rowCount = heldValue(count)
		}
	}
	if cs.c.dryRun {
		for _, e := range entries {
			if _, lit := e.asWritten.Literal(); e.asWritten.Value == "" && !lit && strings.Contains(e.asWritten.Assignment, "=") &&
				!strings.HasPrefix(e.asWritten.Name, "@") {
				// name = an expression, DEFAULT, a user variable: a dry server session holds
				// no value, and replaying NULL, or the text as written, would be a guess at
				// what the server computed. (A user variable's value decides no route; SET
				// NAMES and SET TRANSACTION replay as written.)
				return nil, errorf("%w: %s", ErrDryRunUnknown, e.asWritten.Assignment)
			}
		}
	}
	vars := make([]routing.SessionVar, len(entries))
	for i, e := range entries {
		switch {
		case e.canon != nil && lits[e.canon.read[0]].sql == "NULL":
			// No server value (a dry run's server session): the assignment as written.
			e.v = e.asWritten
		case e.canon != nil:
			parts := make([]string, len(e.canon.read))
			for k, name := range e.canon.read {
				parts[k] = variableRef(name) + " = " + lits[name].sql
			}
			e.v.Assignment = strings.Join(parts, ", ")
			if len(e.canon.read) == 1 {
				e.v.Value = lits[e.canon.read[0]].value
			}
		case e.v.Value == "":
			lit := lits[e.v.Name]
			e.v.Assignment, e.v.Value = variableRef(e.v.Name)+" = "+lit.sql, lit.value
		}
		vars[i] = e.v
	}
	return vars, nil
}

// canon is how the client session records a group of variables: under one name, with the values
// of read as the server holds them after any assignment of one of them.
type canon struct {
	name string
	read []string
}

// databaseCollation is the entry of character_set_database and collation_database, which USE
// sets.
const databaseCollation = "collation_database"

// canonical maps each variable that a SET may name to the entry recording it, for the variables
// that set one another or are set through several names (MariaDB's manual: SET NAMES and SET
// CHARACTER SET set character_set_client, character_set_results and collation_connection, which
// sets character_set_connection and the other way round; SET SESSION TRANSACTION sets
// tx_isolation and tx_read_only, transaction_isolation and transaction_read_only are their
// names since 11.1; a max_join_size other than DEFAULT sets sql_big_selects; storage_engine is
// default_storage_engine; tmp_memory_table_size is tmp_table_size; optimizer_switch is changed
// flag by flag), and for those obroute reads itself (autocommit, completion_type, sql_mode,
// whose names the server expands).
var canonical = func() map[string]*canon {
	m := map[string]*canon{}
	add := func(c *canon, names ...string) {
		for _, n := range append(names, c.name) {
			m[n] = c
		}
	}
	add(&canon{"names", []string{"character_set_client", "character_set_results", "collation_connection"}},
		"character_set_client", "character_set_results", "character_set_connection", "collation_connection")
	add(&canon{databaseCollation, []string{"collation_database"}}, "character_set_database")
	add(&canon{"collation_server", []string{"collation_server"}}, "character_set_server")
	add(&canon{"tx_isolation", []string{"tx_isolation"}}, "transaction_isolation")
	add(&canon{"tx_read_only", []string{"tx_read_only"}}, "transaction_read_only")
	add(&canon{"max_join_size", []string{"max_join_size", "sql_big_selects"}}, "sql_max_join_size", "sql_big_selects")
	add(&canon{"default_storage_engine", []string{"default_storage_engine"}}, "storage_engine")
	add(&canon{"tmp_table_size", []string{"tmp_table_size"}}, "tmp_memory_table_size")
	for _, name := range []string{"autocommit", "completion_type", "sql_mode", "optimizer_switch"} {
		add(&canon{name, []string{name}})
	}
	return m
}()

// recordVars keeps variables s has just been given, in the layer of its traffic. s was in line
// before (sync ran); it stays in line unless they gave a shadow server session a production
// value that the shadow layer overrides.
func (cs *clientSession) recordVars(s *serverSession, vars []routing.SessionVar, shadow bool) {
	stays := cs.inLine(s)
	cs.layer(shadow).record(vars)
	for _, v := range vars {
		cs.forgetRefusals(v.Name)
		stays = stays && (shadow || !s.shadow || !cs.shadowState.sets(v.Name))
		switch v.Name {
		case "autocommit":
			cs.setAutocommit(shadow, isOn(v.Value))
		case "completion_type":
			cs.completion[traffic(shadow)] = v.Value
		}
	}
	if stays {
		s.applied = slices.Clone(cs.wanted(s))
		cs.markInLine(s)
	}
}

// assignedVars are user variables a statement assigned outside SET on server session s.
type assignedVars struct {
	s      *serverSession
	names  []string
	shadow bool
}

// readAssigned reads back the user variables the last statement assigned outside SET and keeps
// them as if SET had assigned them. When the server session that assigned them is gone, so are
// their values: like a go-sql-driver connection that broke, the client session is discarded
// (driver.ErrBadConn) rather than go on with values it no longer has.
func (cs *clientSession) readAssigned(ctx context.Context) error {
	a := cs.assigned
	cs.assigned = assignedVars{}
	if a.s.broken || cs.serverOf(a.s.backend.name) != a.s {
		cs.broken = true
		return driver.ErrBadConn
	}
	assigned := make([]routing.SessionVar, len(a.names))
	for i, name := range a.names {
		assigned[i] = routing.SessionVar{Name: name}
	}
	vars, err := cs.readBackVars(ctx, a.s, assigned)
	if err != nil {
		if ctx.Err() != nil {
			cs.assigned = a // the statement's context ended: read them before the next one
			return err
		}
		cs.broken = true
		return driver.ErrBadConn
	}
	cs.recordVars(a.s, vars, a.shadow)
	return nil
}

// recordUse keeps the current database of a USE that s has just run.
func (cs *clientSession) recordUse(s *serverSession, db string, shadow bool) {
	stays := cs.inLine(s) && (shadow || !s.shadow || cs.shadowState.database == "")
	cs.layer(shadow).use(db)
	s.database = cs.physicalDatabase(s, db)
	s.applied = slices.DeleteFunc(s.applied, func(v routing.SessionVar) bool { return v.Name == databaseCollation })
	cs.forgetRefusals("database")
	if stays {
		cs.markInLine(s)
	}
}

// autocommitFor returns the autocommit in force for shadow traffic (shadow) or production.
func (cs *clientSession) autocommitFor(shadow bool) bool {
	if shadow && cs.shadowAutocommit != 0 {
		return cs.shadowAutocommit > 0
	}
	return cs.autocommit
}

// setAutocommit records SET autocommit for shadow traffic or production. Turning it on from off
// commits the transaction of the same traffic, explicit or not, as MariaDB does (turning it on
// when it is on commits nothing).
func (cs *clientSession) setAutocommit(shadow, on bool) {
	wasOn := cs.autocommitFor(shadow)
	if shadow {
		cs.shadowAutocommit = -1
		if on {
			cs.shadowAutocommit = 1
		}
	} else {
		cs.autocommit = on
	}
	if on && !wasOn && cs.tx.active && cs.tx.shadow == shadow {
		cs.closeTx()
	}
}

// applyNextTx sends a pending one-shot SET TRANSACTION of shadow traffic (shadow) or production
// to s, where the next transaction of that traffic runs.
func (cs *clientSession) applyNextTx(ctx context.Context, s *serverSession, shadow bool) error {
	l := cs.layer(shadow)
	if l.nextTx == "" {
		return nil
	}
	next := l.nextTx
	l.nextTx = "" // applied, or refused by the server: either way it is spent
	_, err := s.exec(ctx, next, nil, false)
	return err
}
