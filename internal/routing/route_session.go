package routing

import (
	"fmt"

	"github.com/obroute/obroute/hint"
)

// userLockRoute routes a statement calling user-level lock functions (GET_LOCK …) to the default
// backend: the locks of every client session live there, in one namespace, as on one server.
// A statement that names no table runs there outside any transaction (Plan.OutsideTx); one that
// names tables must be routed there by them.
func (r *Router) userLockRoute(p *Plan, st *Statement, in Input) (pinned bool, err error) {
	d := r.cfg.Settings.Default
	if len(st.Tables) == 0 && st.ParseErr == nil {
		p.single(UseRoutePolicy, ClassForced, d, st.SQL, in.Args)
		p.OutsideTx = true
		if in.Explain {
			p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to the default backend %s, where the user-level locks of every client session live", d))
		}
		return true, nil
	}
	if st.ParseErr != nil || st.scanned {
		pinned, err = r.unreadRoute(p, st, in, in.Session)
	} else if st.time != nil || st.RouteErr != nil {
		return false, errorf("%w: the statement calls user-level lock functions (GET_LOCK …), whose locks live on the default backend %s, and reads the time-sharded table %s; take the lock in a statement of its own (SELECT GET_LOCK(…))", ErrSessionState, d, st.Tables[0])
	} else if pinned, err = r.staticRoute(p, st, in); err == nil && !pinned {
		r.defaultRoute(p, st, in)
	}
	if err != nil {
		return pinned, err
	}
	if b := p.Targets[0].Backend; len(p.Targets) != 1 || b != d {
		return false, errorf("%w: the statement calls user-level lock functions (GET_LOCK …), whose locks live on the default backend %s, and reads tables of backend %s; take the lock in a statement of its own (SELECT GET_LOCK(…))", ErrSessionState, d, b)
	}
	return true, nil
}

// lockTables checks that the tables a LOCK TABLES (or FLUSH TABLES … WITH READ LOCK) names live
// on one backend, a table without a route on the default one: one server locks them together,
// and obroute cannot hold the locks of one statement on two backends.
func (r *Router) lockTables(st *Statement, sess *SessionState) error {
	first, firstTable := "", ""
	for _, t := range st.Tables {
		if r.time != nil {
			if tt, ok := r.time.tables[t]; ok {
				return errorf("%w: the statement locks the time-sharded table %s, whose rows are in physical tables on several backends, which one lock cannot hold as one server would; lock the physical tables by name, with a backend hint for their backend", ErrSessionState, tt.Table)
			}
		}
		b, ok := sess.TempTables[t]
		if !ok {
			if b, ok = r.cfg.Settings.Routes[t]; !ok {
				b = r.cfg.Settings.Default
			}
		}
		switch {
		case first == "":
			first, firstTable = b, t
		case b != first:
			return errorf("%w: the statement locks table %s, on backend %s, and table %s, on backend %s, which one server would lock together; lock the tables of one backend at a time", ErrCrossBackend, firstTable, first, t, b)
		}
	}
	return nil
}

// applyPin keeps a statement on the backend the client session is pinned to (SessionState.Pin),
// as applyTransaction does for a transaction: a statement whose route names another backend is
// refused.
func (r *Router) applyPin(p *Plan, sess *SessionState, pinned bool) error {
	b := sess.Pin
	if p.Shadow && !r.shadowOf[b] || !p.Shadow && r.shadowOf[b] {
		return nil // the pin is of the other traffic's state
	}
	for i := range p.Targets {
		if p.Targets[i].Backend == b {
			continue
		}
		if pinned || len(p.Targets) > 1 {
			return errorf("%w: %s, so every statement of this client session runs there as on one server, and this one needs backend %s; run it on another connection (or end the locks with UNLOCK TABLES)",
				ErrSessionState, sess.PinWhy, p.Targets[i].Backend)
		}
		// Under table locks the server answers for a table not locked (1100) whichever it is;
		// otherwise the pinned server session's table of that name is another table.
		if t := p.unroutedTable(); t != "" && !sess.PinByLocks {
			return errorf("%w: %s, so every statement of this client session runs there as on one server, and table %s has no route: it lives on backend %s; give %s a route to %s, or run it on another connection",
				ErrSessionState, sess.PinWhy, t, p.Targets[i].Backend, t, b)
		}
		p.Targets[i].Backend = b
	}
	p.Type, p.Class = UsePinnedSession, ClassForced
	if p.Shadow {
		p.Class = ClassShadow
	}
	if p.explain {
		p.Prompts = append(p.Prompts, "Will route to the pinned server session: "+sess.PinWhy)
	}
	return nil
}

// routePrepared routes PREPARE … FROM text and EXECUTE IMMEDIATE text … USING by the statement
// they prepare, read from its text as if it came alone: the statement goes, as written, where that
// statement would go. What obroute could not follow at each EXECUTE is refused: a text it cannot
// read while tables have rules, a statement that obroute runs itself (transactions, locks, USE),
// one on a time-sharded table (each execution is rewritten for its range's tables), one whose
// route or shadow decision would depend on the arguments.
func (r *Router) routePrepared(in Input, hints hint.Set, sess *SessionState) (*Plan, error) {
	st := in.Statement
	c := st.Control
	what := "PREPARE " + c.Name
	if c.Immediate {
		what = "EXECUTE IMMEDIATE"
	}
	inner := c.Prepared
	if inner == nil {
		if r.cfg.Shadow != nil && hints.Shadow != hint.ShadowOff && (hints.Shadow != hint.ShadowOn || r.productionDBs != nil) {
			return nil, errorf("%w: %s of a text obroute cannot read (not a string literal, nor a user variable obroute saw set to one), while a shadow rule is configured: the text may be shadow traffic (by a hint in it, or by the tables it names) that would run where obroute cannot tell; write the text as a literal, or set the variable with SET @v = '…' first, or hint the statement as shadow or production traffic", ErrSessionState, what)
		}
		if len(r.routed) > 0 {
			return nil, errorf("%w: %s of a text obroute cannot read (not a string literal, nor a user variable obroute saw set to one), while tables have routing rules: obroute cannot tell which tables it names; write the text as a literal, or set the variable with SET @v = '…' first", ErrSessionState, what)
		}
		// No table has a rule: it goes where a statement naming no table goes.
		p := &Plan{Statement: st, Hints: hints, Level: hints.Level, InTransaction: sess.InTransaction, explain: in.Explain}
		own := in
		own.Statement = &Statement{SQL: st.SQL, Kind: KindOther}
		if _, err := r.baseRoute(p, own, in.Args, sess); err != nil {
			return nil, err
		}
		p.Statement = st
		return p, r.applySession(p, st, hints, in.Args, sess, false)
	}
	if why := preparedProblem(inner, c); why != "" {
		return nil, errorf("%w: %s of a statement that %s", ErrSessionState, what, why)
	}
	if inner.pieces != nil || inner.Kind == KindPrepare || inner.Kind == KindExecute || inner.Kind == KindDeallocate {
		if r.cfg.Shadow != nil {
			// The server refuses it, but its text would reach a backend obroute cannot choose
			// by what the inner text runs (shadow traffic in it would reach production).
			return nil, errorf("%w: %s of a text that holds several statements or a PREPARE, EXECUTE or DEALLOCATE, which the server does not run inside a prepared statement, while a shadow rule is configured: obroute does not send it to a backend it cannot choose by that text; run the inner statement directly", ErrSessionState, what)
		}
		// The server refuses it (a text of several statements, or a prepared-statement command
		// inside another): it goes where session state goes, for the server's error.
		p := &Plan{Statement: st, Hints: hints, Level: hints.Level, InTransaction: sess.InTransaction, explain: in.Explain}
		b := sess.LastBackend
		if b == "" {
			b = r.cfg.Settings.Default
		}
		p.single(UseSessionState, ClassForced, b, st.SQL, in.Args)
		return p, r.applySession(p, st, hints, in.Args, sess, false)
	}
	if t, ok := r.readsShadowColumns(inner); ok && (inner.Params > 0 || c.Using) {
		return nil, errorf("%w: %s of a statement on the shadow table %s, whose shadow rule reads column values, with ? arguments: the decision would depend on values obroute does not see; write the values into the text, or hint it as shadow or production traffic", ErrSessionState, what, t)
	}
	// The statement's own route, with the hints of the statement that prepares it.
	innerIn := in
	innerIn.Statement, innerIn.Hints, innerIn.Args = inner, hints, nil
	p, err := r.route(innerIn)
	if err != nil {
		return nil, err
	}
	if p.Catalog != nil {
		return nil, errorf("%w: %s of a catalog statement (%s): obroute answers it for the logical tables by reading every backend's catalog when it runs, which a statement prepared on one server does not do; run the statement directly, with its arguments written into it", ErrCatalog, what, statementVerb(inner))
	}
	if len(p.Targets) != 1 || p.Merge != nil || p.Targets[0].SQL != inner.SQL {
		return nil, errorf("%w: %s of a statement that obroute rewrites to run it (%s): each execution would need another text; run the statement directly, or prepare it with the driver (db.Prepare)", ErrSessionState, what, inner.Kind)
	}
	p.Statement = st
	p.Targets[0].SQL, p.Targets[0].Args = st.SQL, in.Args
	return p, nil
}

// preparedProblem says why the statement inner cannot be prepared with PREPARE, or run with
// EXECUTE IMMEDIATE … USING (c.Immediate), "" when it can. (EXECUTE IMMEDIATE of a text without
// USING is run by the client session as that text itself.)
func preparedProblem(inner *Statement, c *Control) string {
	switch {
	case inner.HintErr != nil:
		return "carries a malformed hint (" + inner.HintErr.Error() + ")"
	case inner.Kind == KindSet && c.Immediate:
		return "sets session variables from USING values, which obroute does not see; write the values into the text"
	case inner.Kind == KindSet && inner.ParseErr == errSetPlaceholder:
		return "sets session variables from ? arguments, whose values obroute does not see; write the values into the text"
	case inner.Kind == KindSet && inner.NextTransaction != "":
		return "sets the next transaction's characteristics, which obroute applies only from a statement of its own; run it directly"
	case inner.Kind == KindUse, inner.Kind == KindBegin, inner.Kind == KindCommit, inner.Kind == KindRollback,
		inner.Kind == KindSavepoint, inner.Kind == KindXA, inner.Kind == KindExplainRoute,
		inner.Control != nil && inner.Control.Lock != 0:
		return fmt.Sprintf("is a %s statement, which obroute follows only as a statement of its own; run it directly", inner.Kind)
	case inner.UserLocks:
		return "takes or releases user-level locks (GET_LOCK …), which obroute follows only in a statement of its own; run it directly"
	case inner.time != nil || inner.RouteErr != nil:
		return "names a time-sharded table, whose statements obroute rewrites for the physical tables of each execution's range; run it directly, or prepare it with the driver (db.Prepare)"
	}
	return ""
}
