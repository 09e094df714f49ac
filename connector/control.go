package connector

import (
	"context"
	"fmt"
	"strings"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// The statements that control a session beyond its variables: XA transactions, table and
// user-level locks, SQL-level prepared statements (PREPARE, EXECUTE, EXECUTE IMMEDIATE) and
// CALL. Each is followed as one server would follow it, or refused (routing.ErrSessionState).
//
// Some leave state on their server session that obroute cannot give another one: table locks,
// user-level locks, prepared statements, whatever a stored procedure did. That server session
// then holds the client session's state (serverSession.holds): when it is lost, the client
// session ends with it, answering driver.ErrBadConn as go-sql-driver's broken connection would.
// Table locks and a statement whose effect obroute cannot see also pin the client session: every
// later statement of the same traffic goes to that server session, as all of them would reach
// the one server; one whose route names another backend is refused.

// pin is the server session every statement of one traffic goes to: backend, and why.
type pin struct {
	backend, why string
	locks        bool // pinned by table locks only: UNLOCK TABLES ends it
}

// tableLocks are the table locks (or read lock) a client session holds for one traffic.
type tableLocks struct {
	backend string
	op      routing.LockOp
}

// sqlStatement is an SQL-level prepared statement: the backend that prepared it and the
// statement it prepared (nil when obroute could not read its text).
type sqlStatement struct {
	backend string
	inner   *routing.Statement
}

// pinTo pins the traffic's statements to backend (see pin) and marks s as holding what.
//
//go:noinline
func (cs *clientSession) pinTo(s *serverSession, shadow bool, why string, locks bool, what holding) {
	p := &cs.pins[traffic(shadow)]
	if p.backend == "" || p.locks && !locks {
		*p = pin{backend: s.backend.name, why: why, locks: locks}
	}
	s.holds |= what
}

// resolveText returns st with the text its PREPARE or EXECUTE IMMEDIATE names in a user
// variable analysed, when the client session set that variable to a string it knows.
func (cs *clientSession) resolveText(st *routing.Statement, shadow bool) *routing.Statement {
	c := st.Control
	if c == nil || c.TextVar == "" || c.Prepared != nil {
		return st
	}
	var v *routing.SessionVar
	if shadow {
		v = cs.shadowState.variable(c.TextVar)
	}
	if v == nil {
		v = cs.state.variable(c.TextVar)
	}
	if v == nil {
		return st
	}
	text, ok := v.StringValue()
	if !ok {
		return st
	}
	cp := *st
	cc := *c
	cc.Text, cc.Prepared = text, cs.c.router.Analyze(text)
	cp.Control = &cc
	return &cp
}

// runsItself reports whether EXECUTE IMMEDIATE st, whose text obroute read, runs as that text
// itself: without USING, a statement the server would run in it (not another PREPARE, EXECUTE
// or DEALLOCATE, nor several statements) means there what it means alone.
func runsItself(st *routing.Statement) (*routing.Statement, bool) {
	c := st.Control
	if st.Kind != routing.KindExecute || !c.Immediate || c.Using || c.Prepared == nil {
		return nil, false
	}
	switch c.Prepared.Kind {
	case routing.KindPrepare, routing.KindExecute, routing.KindDeallocate:
		return nil, false
	}
	if c.Prepared.Kind == routing.KindOther && len(c.Prepared.Tables) == 0 && strings.Contains(c.Prepared.SQL, ";") {
		return nil, false // maybe several statements, which the server refuses there
	}
	return c.Prepared, true
}

// innerHints returns ctx with the hints of st's comments added, for the statement st runs.
func innerHints(ctx context.Context, st *routing.Statement) (context.Context, error) {
	if st.HintErr != nil {
		return nil, st.HintErr
	}
	if st.Hints.IsZero() {
		return ctx, nil
	}
	h, err := hint.Combine(hint.FromContext(ctx), st.Hints)
	if err != nil {
		return nil, err
	}
	return hint.WithSet(ctx, h), nil
}

// effective returns the statement whose effect on the session a plan's statement has: for
// EXECUTE of an SQL-level prepared statement, and EXECUTE IMMEDIATE … USING, the statement it
// runs (nil when obroute could not read it); else the statement itself.
func (cs *clientSession) effective(plan *routing.Plan) *routing.Statement {
	st := plan.Statement
	switch {
	case st.Kind == routing.KindExecute && st.Control.Immediate:
		return st.Control.Prepared
	case st.Kind == routing.KindExecute:
		if p, ok := cs.prepared[traffic(plan.Shadow)][st.Control.Name]; ok {
			return p.inner
		}
		return st // not prepared through obroute: the server refuses it
	}
	return st
}

// beforeControl runs what must happen before the statement of plan is sent: the locks a new
// LOCK TABLES or a BEGIN releases, the prepared statement a PREPARE of the same name replaces.
// It refuses what cannot be exact.
func (cs *clientSession) beforeControl(ctx context.Context, plan *routing.Plan) error {
	st := plan.Statement
	tr := traffic(plan.Shadow)
	b := plan.Targets[0].Backend
	if c := st.Control; c != nil && c.Lock == routing.LockRead && len(st.Tables) == 0 && plan.Hints.Backend == "" {
		if backends := cs.c.backendsOf(plan.Shadow); len(backends) > 1 {
			return errorf("%w: FLUSH TABLES WITH READ LOCK locks one server, and this traffic's tables are on backends %s; send it to each with a backend hint (/*+ OBROUTE(backend=…) */)",
				routing.ErrSessionState, strings.Join(backends, ", "))
		}
	}
	if c := st.Control; c != nil && (c.Lock == routing.LockTables || c.Lock == routing.LockRead) {
		// A new LOCK TABLES releases the locks held before, wherever they are.
		if l := cs.locks[tr]; l.backend != "" && l.backend != b {
			if err := cs.unlockOn(ctx, l.backend); err != nil {
				return err
			}
		}
	}
	if st.Kind == routing.KindPrepare {
		// A statement of the same name is deallocated first, even when the new one fails: the
		// client session has one namespace of prepared statements, whichever traffic prepared
		// the old one (a shadow PREPARE p replaces production's p, and the other way round).
		for _, t := range [2]int{tr, 1 - tr} {
			old, ok := cs.prepared[t][st.Control.Name]
			if !ok || old.backend == b {
				continue
			}
			delete(cs.prepared[t], st.Control.Name)
			if s := cs.serverOf(old.backend); s != nil && !s.broken {
				_, err := s.exec(ctx, "DEALLOCATE PREPARE "+quoteIdent(st.Control.Name), nil, false)
				cs.dropBroken(s)
				if err != nil && !reachedServer(err) {
					return err
				}
			}
		}
	}
	return nil
}

// unlockOn sends UNLOCK TABLES to backend, whose server session holds the client session's
// table locks, and forgets them.
func (cs *clientSession) unlockOn(ctx context.Context, backend string) error {
	for tr := range cs.locks {
		if cs.locks[tr].backend == backend {
			cs.locks[tr] = tableLocks{}
			if cs.pins[tr].locks {
				cs.pins[tr] = pin{}
			}
		}
	}
	s := cs.serverOf(backend)
	if s == nil || s.broken {
		return nil
	}
	s.holds &^= holdsLocks
	_, err := s.exec(ctx, "UNLOCK TABLES", nil, false)
	cs.dropBroken(s)
	return err
}

// releaseTableLocks releases the table locks of LOCK TABLES, as START TRANSACTION does on the
// server (a read lock of FLUSH TABLES … WITH READ LOCK stays).
func (cs *clientSession) releaseTableLocks(ctx context.Context) error {
	for tr := range cs.locks {
		if l := cs.locks[tr]; l.backend != "" && l.op == routing.LockTables {
			if err := cs.unlockOn(ctx, l.backend); err != nil {
				return err
			}
		}
	}
	return nil
}

// afterControl follows what the statement of plan, just run on s (err is its error, nil or one
// the server answered), did to the client session's locks, prepared statements and pins.
func (cs *clientSession) afterControl(s *serverSession, plan *routing.Plan, err error) {
	st := plan.Statement
	eff := cs.effective(plan)
	tr := traffic(plan.Shadow)
	if c := st.Control; c != nil && c.Lock != 0 {
		switch {
		case c.Lock == routing.UnlockTable:
			if cs.locks[tr].backend == s.backend.name {
				if err == nil && cs.tx.active && cs.tx.backend == s.backend.name {
					cs.closeTx() // UNLOCK TABLES commits while tables are locked
				}
				cs.locks[tr] = tableLocks{}
				s.holds &^= holdsLocks
				if cs.pins[tr].locks {
					cs.pins[tr] = pin{}
				}
			}
		case err == nil:
			cs.locks[tr] = tableLocks{backend: s.backend.name, op: c.Lock}
			what := "table locks (LOCK TABLES)"
			if c.Lock == routing.LockRead {
				what = "a read lock (FLUSH TABLES … WITH READ LOCK)"
			}
			cs.pinTo(s, plan.Shadow, fmt.Sprintf("the client session holds %s on backend %s", what, s.backend.name), true, holdsLocks)
		default:
			// A LOCK TABLES that failed released the locks held before, as the server does.
			if cs.locks[tr].backend == s.backend.name {
				cs.locks[tr] = tableLocks{}
				if cs.pins[tr].locks {
					cs.pins[tr] = pin{}
				}
			}
		}
	}
	if st.UserLocks {
		s.holds |= holdsUserLocks
	}
	switch st.Kind {
	case routing.KindPrepare:
		if err == nil {
			cs.prepared[tr][st.Control.Name] = sqlStatement{backend: s.backend.name, inner: st.Control.Prepared}
			s.holds |= holdsPrepared
		} else {
			for t := range cs.prepared { // the server deallocated the old one
				if p, ok := cs.prepared[t][st.Control.Name]; ok && p.backend == s.backend.name {
					delete(cs.prepared[t], st.Control.Name)
				}
			}
		}
		if st.Control.Prepared == nil {
			// Its text is unknown: what it runs may change anything.
			cs.pinTo(s, plan.Shadow, fmt.Sprintf("the client session prepared %s on backend %s from a text obroute cannot read", st.Control.Name, s.backend.name), false, holdsUnknown)
		}
	case routing.KindDeallocate:
		if err == nil {
			for t := range cs.prepared {
				if p, ok := cs.prepared[t][st.Control.Name]; ok && p.backend == s.backend.name {
					delete(cs.prepared[t], st.Control.Name)
				}
			}
		}
	}
	if eff == nil || eff.Invisible {
		what := "CALL"
		switch set, inner := setWords(st.SQL); {
		case st.Kind == routing.KindExecute:
			what = "EXECUTE"
		case set && inner != "":
			what = "SET STATEMENT … FOR " + strings.ToUpper(inner)
		case set && err != nil:
			return // the server checks every assignment of a SET before it makes one: nothing changed
		case set:
			what = "a SET obroute does not read as session state"
		}
		cs.pinTo(s, plan.Shadow, fmt.Sprintf("the client session ran %s on backend %s, whose effect on the session (variables, temporary tables, transactions) obroute cannot see", what, s.backend.name), false, holdsUnknown)
	}
}

// setWords reads sql's first words, after its hints: set reports whether it is a SET; inner is,
// for SET STATEMENT … FOR, the first word after FOR ("" otherwise).
func setWords(sql string) (set bool, inner string) {
	w := strings.Fields(sql[hint.StatementStart(sql):])
	if len(w) == 0 || !strings.EqualFold(w[0], "set") {
		return false, ""
	}
	if len(w) > 1 && strings.EqualFold(w[1], "statement") {
		for i := 2; i+1 < len(w); i++ {
			if strings.EqualFold(w[i], "for") {
				return true, w[i+1]
			}
		}
	}
	return true, ""
}

// backendsOf lists the backends of production (shadow false) or shadow traffic.
//
//go:noinline
func (c *Connector) backendsOf(shadow bool) []string {
	var out []string
	for _, b := range c.cfg.Backends {
		if c.isShadowBackend(b.Name) == shadow {
			out = append(out, b.Name)
		}
	}
	return out
}

// bindPending binds a transaction that has run nothing to the backend where session state goes
// (the last statement's, else the default one, mapped to its shadow for shadow traffic) and
// starts it there: for a statement the server must answer inside it (XA END of an XA transaction
// that ran nothing, …).
func (cs *clientSession) bindPending(ctx context.Context) error {
	b := cs.routing.LastBackend
	if b == "" {
		b = cs.c.cfg.Default
	}
	shadow := cs.tx.hints.Shadow == hint.ShadowOn
	if shadow && cs.c.cfg.Shadow != nil {
		for _, m := range cs.c.cfg.Shadow.Mappings {
			if m.Production == b {
				b = m.Shadow
			}
		}
	}
	s, err := cs.server(ctx, b)
	if err != nil {
		return err
	}
	if err := cs.sync(ctx, s); err != nil {
		return err
	}
	return cs.startTx(ctx, s, shadow)
}

// xaBackendUnknown refuses an XA statement obroute cannot place: XA COMMIT or ROLLBACK of an xid
// this client session did not start, or XA RECOVER, when several backends could hold it.
func (cs *clientSession) xaBackendUnknown(st *routing.Statement, hints hint.Set) error {
	c := st.Control
	if c.XA != routing.XACommit && c.XA != routing.XARollback && c.XA != routing.XARecover {
		return nil
	}
	if cs.tx.xa != "" && c.XA != routing.XARecover || hints.Backend != "" || st.Hints.Backend != "" || len(cs.c.cfg.Backends) == 1 {
		return nil
	}
	what := "XA RECOVER"
	if c.XA != routing.XARecover {
		what = "XA COMMIT or ROLLBACK of xid " + c.Name + ", which this client session did not start,"
	}
	return errorf("%w: %s needs the backend that prepared the XA transaction, which obroute cannot tell among backends %s; send it with a backend hint (/*+ OBROUTE(backend=…) */)",
		routing.ErrSessionState, what, strings.Join(cs.c.backendsOf(false), ", "))
}

// runXA runs what obroute does itself of an XA statement st: XA START outside a transaction is
// held until the transaction's first statement (as BEGIN is), when the server would accept it
// wherever that is (no table locks, an xid it reads: Control.XidPlain) and nothing pins the
// client session. It reports whether st is done; the others go to the server, which answers them
// at once (inside a transaction, under table locks: XAER_OUTSIDE; a malformed xid: a syntax
// error).
func (cs *clientSession) runXA(st *routing.Statement, hints hint.Set) bool {
	if st.Control.XA != routing.XAStart || cs.tx.active {
		return false
	}
	tr := traffic(hints.Shadow == hint.ShadowOn)
	if !st.Control.XidPlain || cs.locks[tr].backend != "" || cs.pins[tr].backend != "" {
		return false
	}
	cs.tx = txState{active: true, explicit: true, hints: hints, xa: st.Control.Name, xaStart: st.SQL}
	return true
}

// afterXA follows an XA statement that the server session of backend answered with success: an
// XA START that obroute did not hold started the transaction there.
func (cs *clientSession) afterXA(st *routing.Statement, backend string, shadow bool) {
	switch st.Control.XA {
	case routing.XAStart:
		if !cs.tx.active {
			cs.tx = txState{active: true, explicit: true, backend: backend, shadow: shadow, xa: st.Control.Name, xaStart: st.SQL}
			if s := cs.serverOf(backend); s != nil {
				s.inTx = true
			}
		}
	case routing.XACommit, routing.XARollback:
		if cs.tx.xa != "" {
			cs.closeTx()
		}
	}
}
