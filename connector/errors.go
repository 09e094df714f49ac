package connector

import "errors"

// Errors of the connector, beside the refusals of statements (ErrNoTimeRange, ErrLevelViolation,
// …). Test them with errors.Is.
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
	// ErrBackendDown: the backend failed config.Health.DownAfter times in a row (when that is set)
	// and is being probed in the background; statements for it fail at once instead of waiting for
	// a timeout. Retry later, or configure a replica (replica_of) to keep serving reads.
	ErrBackendDown = errors.New("obroute: backend is down")
	// ErrMetadataUnavailable: the shard metadata could not be loaded for the first time, so a
	// statement on a time-sharded table cannot be routed. It wraps the cause; the next statement
	// that needs the metadata tries again.
	ErrMetadataUnavailable = errors.New("obroute: shard metadata not loaded")
	// ErrNoPrimary: no candidate of the backend's service has been found writable yet.
	ErrNoPrimary = errors.New("obroute: service has no primary")
	// ErrPrimaryChanged: the service's primary moved while a transaction was open on the old
	// one. The transaction was not committed (errors.Is(err, ErrTxBackendLost) holds too);
	// run it again: it goes to the new primary.
	ErrPrimaryChanged = errors.New("obroute: service primary changed")
	// ErrDryRunUnknown: in a dry run (WithDryRun), a SET gave a system variable a value only a
	// server computes (an expression, DEFAULT, a user variable: SET time_zone =
	// @@global.time_zone), which the dry server session cannot know. The client session's
	// state is unknown from then on: what its next statements would do may depend on the value.
	ErrDryRunUnknown = errors.New("obroute: dry run: the session's state depends on a value only a server computes")
	// ErrNotObroute: the handle was not opened with obroute (its driver is another one).
	ErrNotObroute = errors.New("obroute: the handle's driver is not obroute")
)
