// Package merge turns the rows of several sub-query results into one
// result, as if one MySQL server had answered the original statement.
//
// # Place in obroute
//
// A statement whose time range crosses the hot/cold boundary is split by
// package routing into a hot sub-query and cold sub-queries (rewritten SQL
// plus a Spec that says how their rows combine: ORDER BY keys, GROUP BY
// keys, partial aggregates, HAVING, DISTINCT, OFFSET/LIMIT, and how many
// leading columns the caller sees). Package connector runs each sub-query
// on its backend's server session and gets a driver.Rows for each. New takes
// the Spec and those driver.Rows and returns one driver.Rows that the
// driver package hands to database/sql. This package depends only on
// database/sql/driver and the standard library: it knows nothing about
// vitess or connections, and of SQL only the text of the hidden columns whose
// values it reads (WeightSQL, SignatureSQL, ExactSumSQL, AvgModeSQL).
//
// # Pipeline
//
// Rows flow through: source → GROUP BY and aggregates (COUNT/SUM/AVG of
// DISTINCT values, ROLLUP subtotals, then the expressions over aggregates,
// Spec.Computed) → HAVING → (sort, for a hash GROUP BY) → DISTINCT →
// OFFSET/LIMIT → drop hidden columns (after the visible ones, or before them:
// Spec.Leading).
//
//   - Union (no ORDER BY, no GROUP BY): input 0 to its end, then input 1, …
//     Constant memory.
//   - ORDER BY: a k-way heap merge of the inputs, each already sorted by the
//     keys. Constant memory: the current row of each input stays in that
//     input's buffer and an input is advanced only when the caller asks for
//     the row after the one it supplied, so no row is copied.
//   - GROUP BY, streaming: when the first len(GroupBy) ORDER BY keys are the
//     group columns (in any order), equal keys arrive together from the
//     merge; one group is held (copied) at a time and one row is read ahead
//     to see the group end.
//   - GROUP BY, hash: otherwise every row is read into groups in memory (at
//     most Spec.MaxHeldRows groups, else ErrTooManyRows), then the groups
//     are sorted by ORDER BY, or kept in the order their first rows came.
//   - Aggregates without GROUP BY form a single group; if no input returns a
//     row, the result has no row.
//   - DISTINCT remembers one key per distinct visible row (at most
//     Spec.MaxHeldRows) and streams, keeping the first of equal rows.
//   - LIMIT: after Offset+Limit rows the inputs are closed at once (a
//     go-sql-driver Close drains the rest, which is short because each
//     sub-query has its own LIMIT offset+limit). With ORDER BY and no GROUP
//     BY, each input is asked for at most Offset+Limit rows: the merge reads
//     one row of each input ahead, but never advances past the row it last
//     returned. A streaming GROUP BY reads one more row, to see the end of
//     the last group.
//
// # Comparison
//
// Every column is compared according to the kind of its type, from the
// column types of one server (Spec.TypesFrom or Spec.ColumnTypes). The same
// comparison serves ORDER BY, GROUP BY, DISTINCT, MIN/MAX and HAVING, so two
// values are in one group exactly when they sort as equal.
//
//   - Integers, YEAR and DECIMAL: numerically and exactly, whether the value
//     is []byte text (text protocol, or DECIMAL in the binary protocol),
//     int64 or uint64; text is compared digit by digit, never via float64.
//   - FLOAT and DOUBLE: as float64.
//   - DATE, DATETIME, TIMESTAMP: []byte "2025-01-02 10:00:00[.ffffff]"
//     compared as text (which is chronological; ".000" fractions equal
//     none), time.Time (parseTime=true) compared as instants. TIME: as a
//     signed duration.
//   - CHAR, VARCHAR, TEXT, ENUM, SET: by the weights the server itself gives
//     the values under their collation (WEIGHT_STRING), which each sub-query
//     returns in a hidden column (Spec.Weights, WeightSQL) with the
//     collation's name; the collation's pad attribute and the weight of a
//     space are read once per statement (Spec.Collations, SignatureSQL): PAD
//     SPACE collations compare the shorter weight as if padded with spaces. This is
//     exact for every one-level collation, explicit COLLATE included, with no
//     collation table in obroute (TestWeightsCompareAsServer checks every
//     collation of every character set of the server against its own
//     comparison and ORDER BY). Refused (ErrNotExact): collations that weigh
//     on several levels (accent- or case-sensitive UCA such as
//     utf8mb4_uca1400_as_cs, czech_cs, thai_520_w2), three whose comparisons
//     do not follow their own weights (big5_chinese_ci,
//     big5_chinese_nopad_ci, tis620_thai_nopad_ci), ORDER BY in collations
//     the server sorts otherwise than it compares (latin7's; and for an
//     expression, the _bin and _nopad collations of non-Unicode character
//     sets), ORDER BY an ENUM or SET (the server orders them by their
//     definition), and ordering a value the server sends as text but orders
//     otherwise (INET6, UUID: no weight).
//   - BINARY, VARBINARY, BLOB, BIT, JSON, GEOMETRY: bytewise.
//   - A column with no known type: by the Go type of its values.
//
// HAVING compares merged numbers (COUNT, SUM, AVG, BIT_AND/OR/XOR) with literals; a
// comparison of text after merging is refused, since the rewrite has the
// sub-queries compute conditions on group keys and MIN/MAX themselves and
// carry the result (Aggregate.Carry).
//
// NULL sorts first ascending and last descending, like MySQL. Ties keep no
// particular order.
//
// # Values
//
// Rows are passed through with the Go types the inputs gave (text
// protocol: []byte or nil; binary protocol: int64, uint64, float32/float64,
// []byte, time.Time), so database/sql scans them exactly as from one server.
// A []byte handed to the caller is valid until the caller's next Next, as
// the driver.Rows contract says; anything held longer (groups, MIN/MAX,
// DISTINCT keys) is copied.
//
// Merged aggregates keep the Go type of their partials:
//
//   - COUNT: partial counts summed.
//   - SUM: exact for integers and DECIMAL, then rounded half away from zero
//     to the result's scale, as the server displays it. Where the partials
//     are rounded for display (an argument with a division), they are read
//     with every digit the server keeps (Aggregate.Exact), so that the
//     result is rounded once, as one server rounds it. float64 for
//     FLOAT/DOUBLE (added in another order than one server would, as another
//     plan of one server would), printed as MariaDB prints a DOUBLE when the
//     partials were text. An int64 SUM that no longer fits an int64 is
//     returned as decimal text.
//   - MIN/MAX: by the column comparison.
//   - AVG: the statement's own AVG stays in the sub-queries, for its type;
//     its value is the exact total SUM divided by the total COUNT at the
//     result's scale (which holds the sessions' div_precision_increment),
//     rounded or cut as the server does: it divides in 9-digit words and
//     rounds those digits to the scale, or cuts them when they are exactly
//     the scale (see avgMode; a hidden column reports which when the
//     argument's digits do not tell). The hidden COUNT column gets the total
//     count.
//   - BIT_AND, BIT_OR, BIT_XOR: the AND, OR or XOR of the partials (BIGINT
//     UNSIGNED, never NULL: over no rows the server gives the identity).
//   - SUM, MIN, MAX and AVG of a group with only NULL partials are NULL.
//
// # Column types
//
// The result reports the column types of one server answering the
// statement: those of an input that is a sub-query over one table (its types
// are one server's by construction), or Spec.ColumnTypes. A UNION ALL of
// tables reports other types for some (an ENUM becomes a VARCHAR, a TEXT a
// MEDIUMTEXT, NULL a BINARY, the precision of some DECIMAL expressions
// drops): package connector reads one table's types for those.
//
// # Errors
//
// An error from an input's Next is returned unchanged (a *mysql.MySQLError
// stays one). New returns errors wrapping ErrColumnsDiffer, ErrInvalidSpec,
// ErrNotExact or ErrNoInputs and closes the inputs; Next can return errors
// wrapping ErrTooManyRows, ErrBadValue or ErrNotExact.
package merge
