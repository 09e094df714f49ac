package connector

import "errors"

// Errors of the connector. Test them with errors.Is.
var (
	// ErrTxBackendLost: the server session of an open transaction was lost before its COMMIT was
	// sent. The transaction was not committed; nothing was replayed elsewhere.
	ErrTxBackendLost = errors.New("obroute: transaction's backend connection lost; the transaction was not committed")
	// ErrCommitUnknown: the connection to the transaction's backend broke after COMMIT (or a
	// statement that commits implicitly, such as DDL) was sent and before the server answered.
	// The transaction may or may not have been committed: check its effects before running it
	// again.
	ErrCommitUnknown = errors.New("obroute: transaction's backend connection lost after COMMIT was sent; whether the transaction was committed is unknown")
	// ErrTempTablesLost: the server session that held the client session's temporary tables was
	// lost; the tables are gone (the statement did not run).
	ErrTempTablesLost = errors.New("obroute: temporary tables lost with their server session")
	// ErrSessionStateRefused: a backend refused a session variable or database that the client
	// session set on another backend, so the statement for it did not run. The error names the
	// variable and the backend; setting the variable back (or to a value that backend accepts)
	// clears it.
	ErrSessionStateRefused = errors.New("obroute: a backend refused the client session's session state")
)
