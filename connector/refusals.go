package connector

import (
	"github.com/obroute/obroute/internal/merge"
	"github.com/obroute/obroute/internal/routing"
)

// The errors a statement is refused with before anything runs, or a split result with, for
// errors.Is. Each message says what to rewrite.
var (
	// ErrUnknownBackend: a hint or route names a backend the configuration does not have.
	ErrUnknownBackend = routing.ErrUnknownBackend
	// ErrCrossBackend: a statement reads tables routed to different backends.
	ErrCrossBackend = routing.ErrCrossBackend
	// ErrTimeConfig: the time-sharding configuration is invalid.
	ErrTimeConfig = routing.ErrTimeConfig
	// ErrCrossBackendTx: a statement of a transaction would run on a backend other than the
	// one the transaction is pinned to; there are no distributed transactions.
	ErrCrossBackendTx = routing.ErrCrossBackendTx
	// ErrNoTimeRange: a statement on a time-sharded table has no range on its shard key (and
	// no default range is configured).
	ErrNoTimeRange = routing.ErrNoTimeRange
	// ErrShadowConflict: a statement's shadow decision differs from its transaction's.
	ErrShadowConflict = routing.ErrShadowConflict
	// ErrShardKeyFunction: a function is applied to the shard key in WHERE.
	ErrShardKeyFunction = routing.ErrShardKeyFunction
	// ErrNoShadowBackend: shadow traffic has no shadow backend to go to.
	ErrNoShadowBackend = routing.ErrNoShadowBackend
	// ErrMixedShadow: a statement on a shadow table whose rule reads column values would write
	// or read rows of both shadow and production traffic (a multi-row INSERT of both, a WHERE
	// that reaches both, an assignment moving a row to the other's values).
	ErrMixedShadow = routing.ErrMixedShadow
	// ErrBadTimeValue: a shard-key value cannot be read as a time.
	ErrBadTimeValue = routing.ErrBadTimeValue
	// ErrShardKeyType: the shard key's column type is not DATETIME, DATE or TIMESTAMP, differs
	// between physical tables, or is not known where the route depends on it.
	ErrShardKeyType = routing.ErrShardKeyType
	// ErrTimeZone: a TIMESTAMP shard key's value is not exact in the session's time zone (an
	// unknown zone, backends in different zones, the skipped or repeated hour of a DST change).
	ErrTimeZone = routing.ErrTimeZone
	// ErrBadLimit: a LIMIT or OFFSET argument is not a row count.
	ErrBadLimit = routing.ErrBadLimit
	// ErrUnreadable: a statement names a routed table in syntax obroute cannot read.
	ErrUnreadable = routing.ErrUnreadable
	// ErrSessionState: a statement changes session or transaction state (a transaction, locks,
	// a prepared statement, what a stored procedure leaves) in a way obroute cannot keep as one
	// server would across its backends; the message says how to rewrite it. Nothing of it ran.
	ErrSessionState = routing.ErrSessionState
	// ErrMultiStatement: a text of several statements (multiStatements=true) whose statements
	// would go to different backends, or one of which changes the session's tracked state.
	ErrMultiStatement = routing.ErrMultiStatement
	// ErrLevelViolation: a statement's range does not fit its declared query level.
	ErrLevelViolation = routing.ErrLevelViolation
	// ErrColdQueryRequired: a statement reads the history store without the cold_query hint
	// the configuration requires.
	ErrColdQueryRequired = routing.ErrColdQueryRequired
	// ErrColdWrite: a write to the history store, which the configuration does not allow.
	ErrColdWrite = routing.ErrColdWrite
	// ErrCrossBackendWrite: a write spans backends.
	ErrCrossBackendWrite = routing.ErrCrossBackendWrite
	// ErrNoShardTable: no physical table covers a row's or a range's time.
	ErrNoShardTable = routing.ErrNoShardTable
	// ErrTimeShardedJoin: a join of time-sharded tables across physical tables.
	ErrTimeShardedJoin = routing.ErrTimeShardedJoin
	// ErrNotMergeable: a statement split across tables whose result cannot be merged exactly.
	ErrNotMergeable = routing.ErrNotMergeable
	// ErrLogicalTable: CREATE, DROP or RENAME of a time-sharded table, the table named where
	// a physical table must stand or in another case, DDL naming one of its physical tables
	// without a backend hint, or DDL whose keys cannot hold across its physical tables; a view
	// or a RENAME onto a time-sharded or routed table's name, a table, view or trigger made on a
	// routed table's backend under a name without a route, a logical table named by a database
	// it is not in; the message says what to run instead.
	ErrLogicalTable = routing.ErrLogicalTable
	// ErrDDLInTransaction: DDL on a time-sharded table (run on each physical table) inside a
	// transaction.
	ErrDDLInTransaction = routing.ErrDDLInTransaction
	// ErrCatalog: a catalog statement obroute cannot answer exactly for the logical tables.
	ErrCatalog = routing.ErrCatalog
	// ErrTooManyRows: a merge would hold more rows in memory than its bound.
	ErrTooManyRows = merge.ErrTooManyRows
	// ErrColumnsDiffer: the sub-queries of a split statement returned different columns (the
	// physical tables' definitions differ).
	ErrColumnsDiffer = merge.ErrColumnsDiffer
)
