// Package shadow decides whether a statement is shadow traffic and, if so,
// which production backends are replaced by which shadow backends. It is
// Apache ShardingSphere's shadow rule, evaluated the way ShardingSphere
// evaluates it. The package is pure: the router gives it a Condition (the
// statement's tables, DML operation, column values and the shadow hint from
// package hint) and applies the returned Decision.
//
// # The rule
//
// A Rule maps each production backend to its shadow backend (Mappings),
// names shadow tables in order (Tables), each with one or more algorithms,
// and may name a default algorithm, which must be of kind hint. Algorithms:
//
//   - hint: accepts when the statement carries the shadow hint;
//   - value_match: accepts a DML statement of its Operation when every row it
//     writes or reads has one of Values in its Column;
//   - regex_match: the same, the value's text matching Regex in full (the
//     regex is anchored at both ends, as Java's Pattern.matches does).
//
// What a statement's rows hold is the router's to read (Condition.Read), as
// the server stores and compares the column's values: 0.0, '0' and 0e0 are
// the value 0 of an INT column. Unlike ShardingSphere, which sends a multi-row
// INSERT of shadow and production rows to production, a statement whose rows
// are partly shadow rows (VerdictMixed), or whose values cannot be read
// (VerdictUnread), is neither: Decision.Refused says why, and the router
// refuses it.
//
// # Evaluation
//
// For a DML statement (Operation set):
//
//  1. If none of the statement's tables is a shadow table, the default
//     algorithm decides: if there is one and it accepts (the hint is on),
//     every mapping applies. Otherwise production.
//  2. Otherwise the shadow tables are walked in configured order, restricted
//     to those the statement names; hint algorithms are tried first over all
//     of them, then column algorithms (ShardingSphere routes by hint before
//     falling back to column values). The first table with an accepting
//     algorithm wins: its mappings apply, restricted to Table.Backends when
//     that list is not empty. Later tables are not evaluated. A column
//     algorithm that can neither accept nor reject (VerdictMixed,
//     VerdictUnread) before any accepted ends the walk with Refused.
//  3. If nothing accepts: production.
//
// A non-DML statement (DDL, DCL, SET, SHOW …; Operation "") has no column
// values, so only the hint decides, as in ShardingSphere: it is shadow traffic
// when the hint is on and the rule has at least one hint algorithm (the
// default or any table's); then every mapping applies.
//
// Note what this means: a statement carrying the shadow hint goes to
// production when no hint algorithm applies to it. The router should treat
// "hint on, Decision.Shadow false" as an error rather than let shadow traffic
// reach production; Decision.Reason says why.
//
// # Worked example
//
// Mappings ds→ds_shadow and ds2→ds2_shadow; tables t_order (algorithms
// user_id_insert: value_match user_id in ["0"] on insert) and t_user
// (algorithm sql_hint: hint; Backends [ds]); default algorithm sql_hint.
//
//	INSERT INTO t_order (user_id) VALUES (0)        shadow: ds→ds_shadow, ds2→ds2_shadow
//	INSERT INTO t_order (user_id) VALUES (1)        production
//	INSERT INTO t_order (user_id) VALUES (0), (1)   refused (one row of each traffic)
//	/* shadow */ SELECT * FROM t_user               shadow: ds→ds_shadow only
//	/* shadow */ SELECT * FROM t_item               shadow (default algorithm): both mappings
//	/* shadow */ SELECT * FROM t_order JOIN t_user  shadow by t_user's hint, ds only (hints first)
//	/* shadow */ TRUNCATE TABLE t_user              shadow (non-DML with hint): both mappings
//	TRUNCATE TABLE t_user                           production
package shadow
