// Package difftest generates the data and the queries of obroute's differential tests: an
// orders data set (with NULLs, equal keys, DECIMAL/DATETIME/VARCHAR columns) split into monthly
// tables per a shard metadata list, random queries over it (ranges across and along the hot
// window boundary, =/IN/BETWEEN/OR, literals and ? arguments, ORDER BY, LIMIT/OFFSET,
// aggregates, GROUP BY, HAVING, DISTINCT), and a comparison of result sets as multisets or in
// order.
//
// RangeGenerator draws the time ranges BI tools and people write (relative to NOW() and
// CURDATE(), constant CASTs, every DATETIME literal format and numbers, NOT, ? arguments), to be
// run with the same NOW() on both sides.
//
// The column-type space (TypeColumns, TypeQueries) is one logical table with a column of every
// MariaDB type family and text columns in collations chosen from the server's SHOW COLLATION
// (PickCollations), its values drawn from fixed trap lists per type, and per column the row,
// DISTINCT, GROUP BY, ORDER BY … LIMIT and aggregate queries.
//
// A differential test loads the whole data set into one reference table and the monthly split
// into the hot and cold backends, runs every generated query through obroute and directly on
// the reference table, and compares. Everything is derived from one seed, which the test
// prints so that a failure can be replayed.
//
// # What is compared
//
// A query whose rows the reference may return in more than one correct way is compared only on
// what is determined: Query.Ordered is set only when the ORDER BY is total (row queries end
// their ORDER BY with the unique id; grouped queries order by every group column after any
// aggregate; DISTINCT queries order by every selected column), and LIMIT/OFFSET appear only on
// such queries, so ties in the sort keys never decide which rows a LIMIT keeps. Other queries
// are compared as multisets. Where a string result is one of several values equal under the
// _ci collation ('paid', 'PAID', 'Paid') and the server may return any of them (MIN(status),
// GROUP BY status, DISTINCT status), Query.FoldCase asks for a case-folded comparison.
//
// The tests themselves (package difftest_test) run against real MariaDB servers started by
// package sqltest; their seed is logged and replayed with OBROUTE_DIFF_SEED=N or -args -seed=N.
//
// The package does no I/O itself except ScanAll, which reads a *sql.Rows.
package difftest
