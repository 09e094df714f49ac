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
// database/sql/driver and the standard library: it knows nothing about SQL
// text, vitess or connections.
//
// # Pipeline
//
// Rows flow through: source → GROUP BY and aggregates → HAVING → (sort, for
// a hash GROUP BY) → DISTINCT → OFFSET/LIMIT → drop hidden columns.
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
// Every column is compared according to its kind (Kind), taken from
// ColumnTypeDatabaseTypeName of the first input that reports it, or from
// Spec.Kinds. The same comparison serves ORDER BY, GROUP BY, DISTINCT,
// MIN/MAX and HAVING, so two values are in one group exactly when they sort
// as equal.
//
//   - Integers, YEAR and DECIMAL: numerically and exactly, whether the value
//     is []byte text (text protocol, or DECIMAL in the binary protocol),
//     int64 or uint64; text is compared digit by digit, never via float64.
//   - FLOAT and DOUBLE: as float64.
//   - DATE, DATETIME, TIMESTAMP: []byte "2025-01-02 10:00:00[.ffffff]"
//     compared as text (which is chronological; ".000" fractions equal
//     none), time.Time (parseTime=true) compared as instants. TIME: as a
//     signed duration.
//   - CHAR, VARCHAR, TEXT, ENUM, SET: as MariaDB's utf8mb4_general_ci, the
//     default collation of utf8mb4 in MariaDB 10.11 (utf8mb3_general_ci
//     weighs every character the same). Each character has one weight: for
//     U+0000–U+FFFF the server's own, from a table generated with
//     WEIGHT_STRING and checked against the server for every character
//     (TestGeneralCIWeightsMatchServer); beyond U+FFFF the weight of U+FFFD,
//     so all such characters (emoji) are equal, as on the server. Strings
//     are compared weight by weight, the shorter one padded with spaces
//     (PAD SPACE: trailing spaces do not count). So case and most accents
//     do not count (e = é = É, n = ñ, ǆ = Ǆ, ß = s as one S, so Straße <
//     STRASSE), while Æ, Ø, Ð, Þ and Й are letters of their own, nothing
//     expands (æ ≠ ae, ß ≠ ss) and a combining accent is a character of its
//     own (e + U+0301 ≠ é). For valid UTF-8 this is exactly the server's
//     order and equality; invalid UTF-8 (which a utf8mb4 column does not
//     send) sorts each byte after every character.
//   - BINARY, VARBINARY, BLOB, BIT, JSON, GEOMETRY: bytewise.
//   - A column with no known type: by the Go type of its values.
//
// The merge cannot see a column's collation, and other collations are not
// reproduced: mark _bin columns KindBinary in Spec.Kinds (compared
// bytewise); latin1_swedish_ci agrees on ASCII and on most accents but not
// on Ä, Å, Ö, Ü, Æ, Ð, Š, Ž, Ÿ, ß and some symbols (2 372 of the 32 640
// pairs of Latin-1 characters compare differently); the UCA collations
// (utf8mb4_unicode_ci, utf8mb4_uca1400_ai_ci, MySQL 8's utf8mb4_0900_ai_ci:
// ß = ss, æ = ae, ignorable characters), NO PAD and language-specific
// collations are not matched; ENUM sorts by declaration order on the
// server, by its text here.
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
//   - SUM: exact for integers and DECIMAL, with the scale of the partials'
//     text ("12.50" + "1.25" = "13.75"); float64 for FLOAT/DOUBLE, printed
//     as MariaDB prints a DOUBLE when the partials were text. An int64 SUM
//     that no longer fits an int64 is returned as decimal text.
//   - MIN/MAX: by the column comparison.
//   - AVG: total SUM / total COUNT; for an exact SUM, DECIMAL text with the
//     SUM's scale + 4 (div_precision_increment, at most 30), rounded half
//     away from zero; the hidden COUNT column gets the total count.
//   - SUM, MIN, MAX and AVG of a group with only NULL partials are NULL.
//
// # Errors
//
// An error from an input's Next is returned unchanged (a *mysql.MySQLError
// stays one). New returns errors wrapping ErrColumnsDiffer, ErrInvalidSpec
// or ErrNoInputs and closes the inputs; Next can return errors wrapping
// ErrTooManyRows or ErrBadValue.
package merge
