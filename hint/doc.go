// Package hint carries per-statement routing hints: whether a statement is
// shadow traffic, whether it may read the history (cold) store, the query
// level the caller declared, and a backend forced by name.
//
// Hints are out-of-band. An application attaches them to the
// [context.Context] of a call (WithShadow, WithLevel, …) or writes them in a
// comment that leads the statement. The driver reads both once per statement
// (FromContext and ParseLeading), merges them with Combine and hands the
// resulting Set to the router as plain data; the router never reads a
// context itself. The package is pure: no I/O, no database/sql.
//
// # Comment forms
//
// Only comments that lead the statement, before its first keyword, can carry
// hints. Keywords and keys are read in any ASCII case (in ASCII letters only:
// a comment spelling one with a letter that Unicode case folding takes to an
// ASCII one, /* ſhadow */ or the Kelvin sign, is refused), and whitespace
// (spaces, tabs, newlines) may stand around every word and punctuation mark.
//
//	/* shadow */                      Shadow = ShadowOn
//	/* cold_query */                  ColdQuery = true
//	/*+ OBROUTE(shadow=true, query_level=L2, cold_query=true, backend=cold-replica) */
//	/* SHARDINGSPHERE_HINT: SHADOW=true, DATA_SOURCE_NAME=ds_1 */
//
// OBROUTE keys: shadow (true or false; false declares production traffic),
// cold_query (true or false), query_level (L1, L2 or L3), backend (a backend
// name). The ShardingSphere form is accepted so that teams moving from
// ShardingSphere keep their comments, with its aliases too ("ShardingSphere
// hint:", dataSourceName): SHADOW maps to Shadow, DATA_SOURCE_NAME to Backend;
// any other ShardingSphere key (WRITE_ROUTE_ONLY, SHARDING_DATABASE_VALUE, …)
// is ErrUnknownHint, because silently ignoring it would route differently from
// what its author expects.
//
// An optimizer-hint comment (/*+ … */) is read by MariaDB's optimizer-hint
// grammar: hints separated by whitespace, each a name and its parenthesised
// arguments (MAX_EXECUTION_TIME(1000), NO_INDEX(t1 idx), QB_NAME(q)). OBROUTE(…)
// may stand anywhere among the server's hints, and several times: each is
// applied and removed from the comment, which keeps the server's hints for the
// server (the comment goes when only OBROUTE hints were in it).
//
// Everything else is not a hint and is left for the server:
//   - other block comments (/* request_id=42 */, sqlcommenter comments) and
//     optimizer-hint comments without OBROUTE (/*+ MAX_EXECUTION_TIME(9) */)
//     are skipped and scanning continues, so a shadow hint is never lost
//     because a tool put another comment in front of it;
//   - line comments (-- note, # note) are skipped and never carry hints; as in
//     MariaDB, "--" starts one only when a space, a control character or the
//     end of the text follows it, and a newline or a NUL byte ends one;
//   - a MySQL executable comment (/*! … */, /*M! … */) or an unterminated
//     comment is statement text: scanning stops there;
//   - text inside string literals is data, never a hint.
//
// A comment that looks like a hint and cannot be read is an error, never
// ignored: a lost shadow hint would send load-test traffic to production. So
// are: a malformed value or an unknown OBROUTE key; an optimizer-hint comment
// that names OBROUTE, SHARDINGSPHERE_HINT, shadow or cold_query and does not
// follow the grammar (hints separated by commas, OBROUTE without parentheses,
// nested parentheses, an unclosed quote); an optimizer hint whose name is one
// of obroute's words but not OBROUTE (OBROUTER(…), SHADOW(…)); a block comment
// whose first word is shadow or cold_query and that holds more
// (/* shadow: true */, /* shadow traffic */), that holds anything but
// whitespace before that word (/** shadow */, a control character, *shadow*),
// or whose first word is OBROUTE (the + forgotten); a block comment holding
// the word shadow or cold_query after other words (/* note: shadow */; not
// /* shadowed rows */, a longer word); a leading line comment
// that names a hint, at its start or in a block comment written inside it
// (-- note /* shadow */, --\x01/* shadow */); and a hint
// comment right after the statement's first word (SELECT /*+ OBROUTE(…) */ …,
// where MariaDB reads optimizer hints: obroute reads none there). So is any
// comment that names OBROUTE or SHARDINGSPHERE_HINT without being a hint
// (/* sent through obroute */, /*+ QB_NAME(obroute) */), and any comment
// naming a hint further into the statement: after the first word, at its end,
// in a line comment, inside or as an executable comment (/*! … */, whose
// content the server runs as code or skips by its version), with string
// literals read both with and without backslash escapes.
//
// # What ParseLeading returns as rest
//
// rest is the statement with the consumed hint comments (and the whitespace
// that follows each) removed, OBROUTE(…) removed from an optimizer-hint
// comment that holds other hints, and leading whitespace trimmed; every other
// comment stays, byte for byte and in order, so the server still sees its
// optimizer hints and sqlcommenter comments. rest is therefore a subsequence
// of the input, and a suffix of it (no copy) whenever no kept comment
// precedes a hint comment, which is the usual case. Parsing rest again yields
// no hints and rest itself. Because hint comments are gone, rest is also a
// good parse-cache key: the same statement with and without hints is one
// template. StatementStart gives the offset of the first keyword in either.
//
// # Precedence
//
// Within one statement's comments, the same key given twice with different
// values is ErrHintConflict. Between the context and the comments, Combine
// merges field by field: a field set on one side only is taken; a field set on
// both sides with the same value is fine; a field set on both sides with
// different values is ErrHintConflict. Neither side silently wins, so a shadow
// context can never be turned into production traffic by a comment, nor the
// reverse. ColdQuery is a permission: false means "not declared", so it is
// taken when either side grants it.
//
// Context setters follow context.Context's own rule: each setter changes one
// field of the Set already in the context, and the innermost (latest) setter
// of a field wins. WithSet replaces the whole Set.
package hint
