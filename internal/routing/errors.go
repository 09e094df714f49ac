package routing

import (
	"errors"

	"github.com/obroute/obroute/internal/merge"
)

// Errors of the routing step: the refusals of static, shadow and multi-statement routing, then
// those of hot/cold time routing. Each is wrapped with the detail of the statement at hand and a
// way to fix it; test them with errors.Is. Package connector exports them to users.
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
	// ErrMixedShadow: a statement on a shadow table whose algorithms read column values would
	// write or read rows of both traffics: a multi-row INSERT of shadow and production rows, a
	// WHERE that reaches both, an UPDATE that moves a row to the other traffic's values. It
	// runs nowhere; write one statement per traffic.
	ErrMixedShadow = errors.New("obroute: statement mixes shadow and production rows")
	// ErrSessionState: the statement changes the session's or its transaction's state (a
	// transaction, locks, a prepared statement, state a stored procedure may leave) in a way that
	// obroute cannot keep as one server would across its backends; the message says how to
	// rewrite it. Nothing of it ran.
	ErrSessionState = errors.New("obroute: session or transaction state obroute cannot keep as one server would")
	// ErrMultiStatement: a text of several statements whose statements obroute cannot send as one
	// text, to one backend, and keep the session's state right; the message says which statement
	// and why.
	ErrMultiStatement = errors.New("obroute: a text of several statements cannot be routed as one")

	// ErrTimeConfig: the time-sharding configuration is invalid.
	ErrTimeConfig = errors.New("obroute: invalid time-sharding configuration")
	// ErrNoTimeRange: a statement on a time-sharded table has no usable shard-key range and no
	// default range is configured.
	ErrNoTimeRange = errors.New("obroute: no time range on the shard key")
	// ErrShardKeyFunction: the shard key is wrapped in a function or expression in WHERE or ON,
	// which defeats both routing and the index.
	ErrShardKeyFunction = errors.New("obroute: function on the shard key")
	// ErrBadTimeValue: a literal or argument compared with the shard key is not a date or
	// datetime obroute can read.
	ErrBadTimeValue = errors.New("obroute: unreadable time value for the shard key")
	// ErrShardKeyType: the shard key's column type is not one obroute routes by (DATETIME, DATE,
	// TIMESTAMP), differs between physical tables, or is not known where the route depends on it.
	ErrShardKeyType = errors.New("obroute: shard-key column type")
	// ErrTimeZone: a TIMESTAMP shard key's value cannot be read exactly in the session's time
	// zone: a zone obroute does not know, backends starting in different zones, a time in the
	// skipped or (ending a range) the repeated hour of a daylight-saving change.
	ErrTimeZone = errors.New("obroute: shard-key time not exact in the session's time zone")
	// ErrBadLimit: the argument of LIMIT ? or OFFSET ? of a statement split across tables is not
	// a row count (negative, not an integer, NULL). It is refused, never read as 0.
	ErrBadLimit = errors.New("obroute: LIMIT or OFFSET argument is not a row count")
	// ErrLevelViolation: the declared query level does not allow the data the range reaches (L1
	// reaching cold data, L3 reaching the hot window). Never downgraded.
	ErrLevelViolation = errors.New("obroute: query level violated")
	// ErrColdQueryRequired: the statement reads the history store, which the configuration allows
	// only with the cold_query hint.
	ErrColdQueryRequired = errors.New("obroute: cold_query hint required")
	// ErrColdWrite: a write would change a table of the history store and cold writes are not
	// allowed.
	ErrColdWrite = errors.New("obroute: write to the history store refused")
	// ErrCrossBackendWrite: one write would change tables on two backends; obroute has no
	// distributed transactions, so it refuses rather than risk a partial write.
	ErrCrossBackendWrite = errors.New("obroute: write spans backends")
	// ErrNoShardTable: the shard metadata holds no physical table for the logical table, or none
	// covers a row being inserted.
	ErrNoShardTable = errors.New("obroute: no physical table")
	// ErrTimeShardedJoin: a statement joins two time-sharded tables (or one with itself).
	ErrTimeShardedJoin = errors.New("obroute: join of time-sharded tables")
	// ErrLogicalTable: a statement would create, drop or rename a time-sharded table as if it
	// were one table, names it where a physical table must stand (CREATE TABLE … LIKE it) or in
	// another case, names one of its physical tables (hidden in the logical view) without a
	// backend hint, or adds a key that cannot hold across its physical tables (unique without
	// the shard key, foreign) or drops or renames its shard key; or would make a view named as
	// a time-sharded or routed table, rename a table onto one, or make a table, view or trigger
	// on a routed table's backend under a name without a route (the logical view would not
	// show it); or names a logical table by a database it is not in. The message says what to
	// run instead.
	ErrLogicalTable = errors.New("obroute: statement treats a logical table as one physical table")
	// ErrDDLInTransaction: DDL on a time-sharded table runs on each of its physical tables, each
	// statement committing on its own: it is refused inside a transaction.
	ErrDDLInTransaction = errors.New("obroute: DDL on a time-sharded table inside a transaction")
	// ErrCatalog: a catalog statement (information_schema, SHOW) that obroute cannot answer
	// exactly for the logical view of the tables; the message says how to ask instead.
	ErrCatalog = errors.New("obroute: catalog statement not answerable for the logical tables")
	// ErrNotMergeable: a statement on a time-sharded table would be split into sub-queries whose
	// rows cannot be merged into the right answer (or the statement's shape cannot be split at
	// all). obroute refuses rather than answer wrongly. It is merge.ErrNotExact, which the merge
	// returns for what only the rows show (a collation, the digits of a division).
	ErrNotMergeable = merge.ErrNotExact
)
