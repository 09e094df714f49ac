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
)
