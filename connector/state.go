package connector

import (
	"context"
	"database/sql/driver"
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
	version  uint64
	vars     []routing.SessionVar // one entry per variable, latest assignment, first-set order
	database string
	// nextTx is a one-shot SET TRANSACTION waiting for the next transaction's backend.
	nextTx string
}

// record adds the assignments of one SET statement.
func (st *sessionState) record(vars []routing.SessionVar) {
	for _, v := range vars {
		replaced := false
		for i := range st.vars {
			if st.vars[i].Name == v.Name {
				st.vars[i] = v
				replaced = true
				break
			}
		}
		if !replaced {
			st.vars = append(st.vars, v)
		}
	}
	st.version++
}

// use records the current database.
func (st *sessionState) use(db string) {
	st.database = db
	st.version++
}

// sets reports whether the layer assigns the variable name.
func (st *sessionState) sets(name string) bool {
	for i := range st.vars {
		if st.vars[i].Name == name {
			return true
		}
	}
	return false
}

// isShadowBackend reports whether backend is the shadow side of a shadow mapping.
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
		return cs.shadowState.database
	}
	return cs.state.database
}

// sync brings s up to the client session's session state: the variables whose assignment
// differs are re-applied in one SET, then the current database.
func (cs *clientSession) sync(ctx context.Context, s *serverSession) error {
	if cs.inLine(s) {
		return nil
	}
	var pending []routing.SessionVar
	for _, v := range cs.state.vars {
		if s.applied[v.Name] != v.Assignment && !(s.shadow && cs.shadowState.sets(v.Name)) {
			pending = append(pending, v)
		}
	}
	if s.shadow {
		for _, v := range cs.shadowState.vars {
			if s.applied[v.Name] != v.Assignment {
				pending = append(pending, v)
			}
		}
	}
	if err := s.replay(ctx, pending); err != nil {
		return err
	}
	if db := cs.database(s); db != "" && db != s.database {
		use := "USE " + quoteIdent(db)
		if _, err := s.exec(ctx, use, nil, false); err != nil {
			return s.refusal(err, "database", "database "+db, use)
		}
		s.database = db
	}
	cs.markInLine(s)
	return nil
}

// replay sends the pending assignments to s: in one SET, except those that must stand alone.
// When the server refuses the SET (which then changes nothing), each assignment is tried alone,
// so that the others are applied and the refused one is named in the error; an assignment the
// server refuses although s already has its value (a variable set back to the value s never
// left) counts as applied.
func (s *serverSession) replay(ctx context.Context, pending []routing.SessionVar) error {
	var list []string
	for _, v := range pending {
		if !v.Standalone {
			list = append(list, v.Assignment)
		}
	}
	if len(list) > 1 {
		_, err := s.exec(ctx, "SET "+strings.Join(list, ", "), nil, false)
		if err == nil {
			for _, v := range pending {
				if !v.Standalone {
					s.applied[v.Name] = v.Assignment
				}
			}
		} else if !reachedServer(err) {
			return err
		}
	}
	for _, v := range pending {
		if s.applied[v.Name] == v.Assignment {
			continue
		}
		text := v.Assignment
		if !v.Standalone {
			text = "SET " + text
		}
		_, err := s.exec(ctx, text, nil, false)
		if err != nil && (!reachedServer(err) || !s.has(ctx, v)) {
			return s.refusal(err, v.Name, "session variable "+strings.TrimPrefix(v.Name, "@"), text)
		}
		s.applied[v.Name] = v.Assignment
	}
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
// compares it with v's literal (booleans as MySQL reads them). An expression or a value that
// cannot be read back is never taken as held.
func (s *serverSession) has(ctx context.Context, v routing.SessionVar) bool {
	if v.Value == "" || v.Standalone || v.Name == "names" {
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
// for shadow traffic, else in production's. An assignment whose value is an expression is
// recorded with the value s computed, so that replaying it elsewhere gives the same value.
func (cs *clientSession) recordSet(ctx context.Context, s *serverSession, st *routing.Statement, shadow bool) error {
	if len(st.Vars) == 0 {
		return nil
	}
	vars, copied := st.Vars, false
	for i, v := range st.Vars {
		if v.Value != "" || v.Standalone || v.Name == "names" {
			continue
		}
		lit, err := readBack(ctx, s, v.Name)
		if err != nil {
			return err
		}
		if !copied { // st is shared by every client session: never modify it
			vars, copied = append([]routing.SessionVar(nil), st.Vars...), true
		}
		vars[i].Assignment = variableRef(v.Name) + " = " + lit
		vars[i].Value = strings.ToLower(strings.Trim(lit, "'"))
	}
	cs.recordVars(s, vars, shadow)
	return nil
}

// recordVars keeps variables s has just been given, in the layer of its traffic. s was in line
// before (sync ran); it stays in line unless they gave a shadow server session a production
// value that the shadow layer overrides.
func (cs *clientSession) recordVars(s *serverSession, vars []routing.SessionVar, shadow bool) {
	stays := cs.inLine(s)
	cs.layer(shadow).record(vars)
	for _, v := range vars {
		s.applied[v.Name] = v.Assignment
		cs.forgetRefusals(v.Name)
		stays = stays && (shadow || !s.shadow || !cs.shadowState.sets(v.Name))
		if v.Name == "autocommit" {
			cs.setAutocommit(shadow, isOn(v.Value))
		}
	}
	if stays {
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
	vars := make([]routing.SessionVar, len(a.names))
	for i, name := range a.names {
		lit, err := readBack(ctx, a.s, name)
		if err != nil {
			if ctx.Err() != nil {
				cs.assigned = a // the statement's context ended: read them before the next one
				return err
			}
			cs.broken = true
			return driver.ErrBadConn
		}
		vars[i] = routing.SessionVar{Name: name, Assignment: variableRef(name) + " = " + lit, Value: strings.ToLower(strings.Trim(lit, "'"))}
	}
	cs.recordVars(a.s, vars, a.shadow)
	return nil
}

// recordUse keeps the current database of a USE that s has just run.
func (cs *clientSession) recordUse(s *serverSession, db string, shadow bool) {
	stays := cs.inLine(s) && (shadow || !s.shadow || cs.shadowState.database == "")
	cs.layer(shadow).use(db)
	s.database = db
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

// setAutocommit records SET autocommit for shadow traffic or production. Turning it on commits
// an implicit transaction of the same traffic, as MySQL does.
func (cs *clientSession) setAutocommit(shadow, on bool) {
	if shadow {
		cs.shadowAutocommit = -1
		if on {
			cs.shadowAutocommit = 1
		}
	} else {
		cs.autocommit = on
	}
	if on && cs.tx.active && !cs.tx.explicit && cs.tx.shadow == shadow {
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
