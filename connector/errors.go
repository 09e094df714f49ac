package connector

import "errors"

// Errors of the connector. Test them with errors.Is.
var (
	// ErrTxBackendLost: the server session of an open transaction was lost. The transaction
	// was not committed; nothing was replayed elsewhere. The client session stays usable.
	ErrTxBackendLost = errors.New("obroute: transaction's backend connection lost; the transaction was not committed")
	// ErrSessionClosed: the client session was closed.
	ErrSessionClosed = errors.New("obroute: client session is closed")
)
