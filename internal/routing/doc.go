// Package routing decides, statement by statement, where SQL goes.
//
// It is pure: no I/O, no database/sql, no context reading. The connector hands it a statement
// text, the hints of the call, the bound arguments and the client session's state as data;
// routing answers with a Plan: the backends, the SQL text each one receives, and how the rows
// come back together (a merge.Spec).
//
// Rules apply in this order; the first that decides wins:
//
//  1. Forced routing: inside a transaction, the transaction's backend (USE_LAST_SESSION);
//     a statement naming a session temporary table, that table's backend; FOUND_ROWS(),
//     ROW_COUNT(), LAST_INSERT_ID(), SHOW WARNINGS/ERRORS, the last backend used.
//  2. A backend hint (USE_COMMENT_TARGET_DB).
//  3. A statement that could not be parsed: routed by the static routes of the tables its words
//     name, refused (ErrUnreadable) when it names a time-sharded table or a routed table where
//     no table stands; else the last backend used when enable_cached_server is on
//     (USE_CACHED_SESSION), else the default backend. MariaDB clauses the parser does not know
//     (RETURNING, LIMIT ROWS EXAMINED, WITH ROLLUP) are set aside first, and the statement is
//     read without them.
//  4. Time-sharded tables: the shard-key range, the shard metadata and the hot window
//     (USE_PARTITION_LOCATION_LOOKUP), possibly split into hot and cold sub-queries. The range
//     is read as the server reads it: literals in MySQL's DATETIME formats and numbers
//     (time_literal.go), constant time expressions folded at the statement's clock in the
//     client session's time zone (time_fold.go, time_zone.go), NOT in three-valued logic
//     (time_range.go); a value not read exactly widens the range, never narrows it. Ranges and
//     each table's clamp are read and written in the shard key's column type (time_keytype.go):
//     a TIMESTAMP's in the session's time zone, mapped to the UTC instants of the metadata
//     (time_instant.go, time_stamp.go).
//  5. Static table routes (which a transaction bound elsewhere cannot take: refused), then the
//     default backend (USE_ROUTE_POLICY).
//
// Shadow routing is applied last to whatever the rules chose: shadow traffic is moved to the
// shadow mapping of every production backend, and refused where a mapping is missing. A
// statement on a time-sharded table that is shadow traffic by its hints or its transaction is
// routed by the shadow side's shard metadata, its sub-queries grouped by shadow backend
// (time_side.go). Column algorithms read the values a statement's rows hold as the server stores
// and compares them, by the column's type from the table's definition, the shadow backend's
// first (shadow.go, shadow_read.go, shadow_type.go, shadow_value.go).
//
// This is the only package of obroute that imports an SQL parser: dolthub's fork of vitess's,
// which registers no flag and keeps no global state, reached through parser.go; obroute's own
// lexer (lex.go) reads what must not depend on the parser. Statement analysis is cached by SQL
// text in a concurrent cache bounded in entries and in bytes.
package routing
