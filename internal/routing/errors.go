package routing

import "errors"

// Errors of the routing step. Each is wrapped with the detail of the statement at hand; test
// them with errors.Is.
var (
	// ErrUnknownBackend: a backend hint or route names a backend that is not configured.
	ErrUnknownBackend = errors.New("obroute: unknown backend")
	// ErrCrossBackend: one statement needs tables that live on different backends, which no
	// single server can answer.
	ErrCrossBackend = errors.New("obroute: statement spans backends")
	// ErrCrossBackendTx: a statement inside a transaction would run on a backend other than the
	// one the transaction is bound to; obroute has no distributed transactions.
	ErrCrossBackendTx = errors.New("obroute: transaction would span backends")
	// ErrShadowConflict: a statement's shadow decision contradicts the one its transaction was
	// bound with.
	ErrShadowConflict = errors.New("obroute: shadow decision conflicts with the transaction")
	// ErrNoShadowBackend: shadow traffic would reach a production backend that has no shadow
	// mapping; obroute refuses rather than touch production.
	ErrNoShadowBackend = errors.New("obroute: no shadow backend for shadow traffic")
	// ErrUnreadable: the statement names a table with a rule (static route, time-sharded
	// table, shadow table) in syntax obroute cannot read exactly enough to follow the rule —
	// the parser does not know it, or would print it back with another meaning. obroute
	// refuses rather than send it where the rule does not say.
	ErrUnreadable = errors.New("obroute: statement names a routed table in syntax obroute cannot read")
)
