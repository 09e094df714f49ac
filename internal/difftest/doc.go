// Package difftest generates the data and the queries of obroute's differential tests: an
// orders data set (with NULLs, equal keys, DECIMAL/DATETIME/VARCHAR columns) split into monthly
// tables per a shard metadata list, random queries over it (ranges across and along the hot
// window boundary, =/IN/BETWEEN/OR, literals and ? arguments, ORDER BY, LIMIT/OFFSET,
// aggregates, GROUP BY, HAVING, DISTINCT), and a comparison of result sets as multisets or in
// order.
//
// A differential test loads the whole data set into one reference table and the monthly split
// into the hot and cold backends, runs every generated query through obroute and directly on
// the reference table, and compares. Everything is derived from one seed, which the test
// prints so that a failure can be replayed.
//
// The package does no I/O itself except ScanAll, which reads a *sql.Rows.
package difftest
