package connector

import "errors"

// Errors of the connector. Test them with errors.Is.
var (
	// ErrTxBackendLost: the server session of an open transaction was lost. The transaction
	// was not committed; nothing was replayed elsewhere. The client session stays usable.
	ErrTxBackendLost = errors.New("obroute: transaction's backend connection lost; the transaction was not committed")
	// ErrTempTablesLost: the server session that held the client session's temporary tables was
	// lost; the tables are gone (the statement did not run).
	ErrTempTablesLost = errors.New("obroute: temporary tables lost with their server session")
)
