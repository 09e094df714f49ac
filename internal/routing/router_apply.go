package routing

import (
	"database/sql/driver"
	"slices"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
)

// applyTransaction keeps a statement on its transaction's backend.
func (r *Router) applyTransaction(p *Plan, sess *SessionState, pinned bool) error {
	if p.Shadow != sess.TxShadow {
		if p.Shadow {
			return errorf("%w: the transaction started as production traffic and this statement is shadow traffic; commit or roll back first, then start a shadow transaction", ErrShadowConflict)
		}
		// A statement without a shadow hint follows its shadow transaction; only an explicit
		// production hint contradicts it.
		if p.Hints.Shadow == hint.ShadowOff {
			return errorf("%w: the transaction started as shadow traffic and this statement is hinted as production; commit or roll back first", ErrShadowConflict)
		}
		p.Shadow = true
	}
	if pinned {
		for _, t := range p.Targets {
			if t.Backend != sess.TxBackend {
				return errorf("%w: the transaction is bound to backend %s and this statement needs backend %s; run it outside the transaction", ErrCrossBackendTx, sess.TxBackend, t.Backend)
			}
		}
	} else {
		for i := range p.Targets {
			if t := p.unroutedTable(); t != "" && p.Targets[i].Backend != sess.TxBackend {
				return errorf("%w: table %s has no route, so it lives on backend %s, and the transaction is bound to backend %s, where a table of that name is not the one this statement reaches outside the transaction; give %s a route to %s, or run it outside the transaction",
					ErrCrossBackendTx, t, p.Targets[i].Backend, sess.TxBackend, t, sess.TxBackend)
			}
			p.Targets[i].Backend = sess.TxBackend
		}
	}
	p.Type, p.Class = UseLastSession, ClassForced
	if p.Shadow {
		p.Class = ClassShadow
	}
	if p.explain {
		p.Prompts = append(p.Prompts, "Will route to last connected server since current query in transaction")
	}
	return nil
}

// applyShadow moves shadow traffic to shadow backends, or refuses it.
func (r *Router) applyShadow(p *Plan, st *Statement, hints hint.Set, args []driver.NamedValue, sess *SessionState) error {
	if hints.Backend != "" && r.shadowOf[hints.Backend] && hints.Shadow != hint.ShadowOn && !p.Shadow {
		// A backend hint naming a shadow backend makes the statement shadow traffic: it must be
		// one, by the rule, or it is refused, so that no production row or session state is
		// written there.
		if hints.Shadow == hint.ShadowOff {
			return errorf("%w: the statement is hinted as production traffic and its backend hint names the shadow backend %s; remove one of the two hints", hint.ErrHintConflict, hints.Backend)
		}
		hints.Shadow = hint.ShadowOn
	}
	var d shadow.Decision
	switch {
	case r.cfg.Shadow != nil:
		txShadow := sess.InTransaction && sess.TxBackend != "" && sess.TxShadow && hints.Shadow != hint.ShadowOff
		var err error
		if d, err = r.decideShadow(p, st, hints, args, sess, txShadow); err != nil {
			return err
		}
	case hints.Shadow == hint.ShadowOn:
		return errorf("%w: the statement is hinted as shadow traffic but no shadow rule is configured; configure shadow mappings", ErrNoShadowBackend)
	}
	if !d.Shadow {
		if t, ok := r.readsShadowColumns(st); ok && st.loadsRows && hints.Shadow == hint.ShadowUnset {
			return errorf("%w: LOAD DATA into the shadow table %s, whose shadow rule reads column values, writes rows obroute does not read; hint it as shadow or production traffic", ErrUnreadable, t)
		}
		if t, ok := r.readsShadowColumns(st); ok && (st.ParseErr != nil || st.scanned) && st.Kind.IsDML() && hints.Shadow != hint.ShadowOff {
			return errorf("%w: the statement names the shadow table %s, whose shadow rule reads column values, and obroute cannot read them from this statement; write it in syntax obroute reads, or hint it as shadow or production traffic", ErrUnreadable, t)
		}
		if hints.Shadow == hint.ShadowOn {
			return errorf("%w: the statement is hinted as shadow traffic but the shadow rule did not accept it (%s); add a hint algorithm for its tables or a default hint algorithm", ErrNoShadowBackend, d.Reason)
		}
		return nil
	}
	p.Shadow = true
	p.Class = ClassShadow
	for i := range p.Targets {
		b := p.Targets[i].Backend
		if r.shadowOf[b] {
			continue
		}
		s, ok := d.Mappings[b]
		if !ok {
			return errorf("%w: backend %s has no shadow mapping for this statement (%s); add one to the shadow rule", ErrNoShadowBackend, b, d.Reason)
		}
		p.Targets[i].Backend = s
	}
	if p.explain {
		p.Prompts = append(p.Prompts, "Shadow traffic: "+d.Reason)
	}
	return nil
}

// unroutedTable returns a table of a statement that went to the default backend because its
// tables have no rule (they live there), other than one it creates as a temporary table and
// those of the system schemas; "" when there is none. Only a statement the parser read counts:
// the words of another may name no table where obroute reads one (LOAD INDEX INTO CACHE t).
func (p *Plan) unroutedTable() string {
	st := p.Statement
	if !p.byDefault || st == nil || st.scanned || st.ParseErr != nil {
		return ""
	}
	if d := st.ddl; d != nil && d.temporary && d.action == ddlDropTable {
		return "" // it drops temporary tables only: it reaches no table of the backend
	}
	for _, t := range st.Tables {
		if t != st.TempTableCreated && !slices.Contains(st.systemTables, t) {
			return t
		}
	}
	return ""
}

// userTable returns a table the statement names other than those of the system schemas, ""
// when there is none.
func (st *Statement) userTable() string {
	for _, t := range st.Tables {
		if !slices.Contains(st.systemTables, t) {
			return t
		}
	}
	return ""
}

// NamesUserTables reports whether the statement names a table other than those of the system
// schemas: one that reads session functions is routed by its tables, not to the server session
// holding their values.
func (st *Statement) NamesUserTables() bool { return st.userTable() != "" }
