package routing

import (
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/metadata"
)

// Shadow traffic on a time-sharded table is routed by the shadow side: the shard metadata read
// from the shadow backend of the metadata backend (TimeConfig.ShadowSnapshot), and what the
// connector read back of the shadow backends (their default time zone, servers, shard-key
// columns, unique keys; TimeFacts(true)), kept by a time router of its own over the same
// tables. Production's metadata and servers are never read for it. A statement is routed by the
// shadow side when it is shadow traffic by its hints or its transaction (the only way a
// statement on a time-sharded table can be: column algorithms are refused there), and the
// sub-queries of one shadow backend are one UNION ALL, as production's of one backend are,
// whatever production backends they stand for.

// shadowTimeSide marks p, a statement on a time-sharded table, as routed by the shadow side when
// it is shadow traffic by its hints or its transaction, with the mappings the shadow rule then
// applies (none when it does not accept it: the statement is refused after routing, having
// read nothing of production).
func (r *Router) shadowTimeSide(p *Plan, st *Statement, hints hint.Set, sess *SessionState) {
	txShadow := sess.InTransaction && sess.TxBackend != "" && sess.TxShadow && hints.Shadow != hint.ShadowOff
	if hints.Shadow != hint.ShadowOn && !txShadow {
		return
	}
	p.shadowSide = true
	d := r.cfg.Shadow.Decide(shadow.Condition{Tables: st.Tables, Operation: operationOf(st.Kind), Hint: true, Read: splitRead})
	switch {
	case d.Shadow:
		p.shadowMap = d.Mappings
	case txShadow:
		p.shadowMap = r.allMappings()
	}
}

// splitRead is the Condition.Read of a statement that may be split across tables: its column
// values are not read.
func splitRead(table, _ string, _ shadow.ValueSet) (shadow.Verdict, string) {
	return shadow.VerdictUnread, "the statement names " + table + " with a time-sharded table, whose split across tables obroute does not classify by column values; hint it as shadow or production traffic"
}

// noShadowSide is the refusal of shadow traffic on a time-sharded table without a shadow side.
func noShadowSide(table string) error {
	return errorf("%w: shadow traffic on %s is routed by the shard metadata of the shadow side, and none is configured: give the metadata backend a shadow mapping", ErrNoShadowBackend, table)
}

// names reports whether st names a time-sharded table.
func (t *timeRouter) names(st *Statement) bool {
	for _, name := range st.Tables {
		if _, ok := t.tables[name]; ok {
			return true
		}
	}
	return false
}

// forPlan returns the time router of p's side: t for production, its shadow router (nil when
// there is none) for shadow traffic.
func (t *timeRouter) forPlan(p *Plan) *timeRouter {
	if p.shadowSide {
		return t.shadow
	}
	return t
}

// sentTo returns the backends the sub-queries of the tables at locs (production backends) are
// sent to: their shadow backends for shadow traffic, locs itself otherwise. A backend without a
// mapping stays: the shadow rule refuses it.
func (t *timeRouter) sentTo(p *Plan, locs []string) []string {
	if !p.shadowSide {
		return locs
	}
	to := make([]string, len(locs))
	for i, b := range locs {
		to[i] = b
		if s, ok := p.shadowMap[b]; ok && !t.router.shadowOf[b] {
			to[i] = s
		}
	}
	return to
}

// TimeFacts records what the connector read back of one side's backends for time routing: of
// production's (Router.TimeFacts(false), which the Router's own methods of the same names
// use) or of the shadow backends (true), keyed by the production backends they stand for.
type TimeFacts struct {
	time *timeRouter
}

// TimeFacts returns the facts of production's side or of the shadow side.
func (r *Router) TimeFacts(shadow bool) TimeFacts {
	if shadow && r.time != nil {
		return TimeFacts{time: r.time.shadow}
	}
	return TimeFacts{time: r.time}
}

// SetDefaultTimeZone is TimeFacts.SetDefaultTimeZone of production's side.
func (r *Router) SetDefaultTimeZone(name string, system *time.Location) {
	r.TimeFacts(false).SetDefaultTimeZone(name, system)
}

// SetBackendServer is TimeFacts.SetBackendServer of production's side.
func (r *Router) SetBackendServer(backend string, flavor Flavor, sqlMode, timeZone string) {
	r.TimeFacts(false).SetBackendServer(backend, flavor, sqlMode, timeZone)
}

// ForgetBackendServer is TimeFacts.ForgetBackendServer of production's side.
func (r *Router) ForgetBackendServer(backend string) { r.TimeFacts(false).ForgetBackendServer(backend) }

// SetShardKeyColumns is TimeFacts.SetShardKeyColumns of production's side.
func (r *Router) SetShardKeyColumns(cols map[string]ShardKeyColumn) {
	r.TimeFacts(false).SetShardKeyColumns(cols)
}

// ForgetTables is TimeFacts.ForgetTables of production's side.
func (r *Router) ForgetTables(cols []KeyColumn) { r.TimeFacts(false).ForgetTables(cols) }

// SetUniqueKeys is TimeFacts.SetUniqueKeys of production's side.
func (r *Router) SetUniqueKeys(keys map[string]string) { r.TimeFacts(false).SetUniqueKeys(keys) }

// UnknownKeyColumns is TimeFacts.UnknownKeyColumns of production's side.
func (r *Router) UnknownKeyColumns(snap *metadata.Snapshot) []KeyColumn {
	return r.TimeFacts(false).UnknownKeyColumns(snap)
}

// KeyColumnsOn is TimeFacts.KeyColumnsOn of production's side.
func (r *Router) KeyColumnsOn(snap *metadata.Snapshot, backend string) []KeyColumn {
	return r.TimeFacts(false).KeyColumnsOn(snap, backend)
}
