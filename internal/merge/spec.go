package merge

import (
	"errors"
	"fmt"
	"reflect"
)

// NoLimit is the Spec.Limit value that means "no LIMIT clause".
const NoLimit int64 = -1

// DefaultMaxHeldRows is the cap on rows held in memory when Spec.MaxHeldRows is 0.
const DefaultMaxHeldRows = 1_000_000

// Spec describes how the rows of several sub-query results become one result.
//
// Column indexes count from 0 over the sub-query's select list, hidden helper
// columns included. Hidden columns follow the visible ones, so a field that
// names a hidden column uses 0 for "none". The zero Spec is not "no limit":
// set Limit to NoLimit.
type Spec struct {
	// Visible is the number of leading columns the caller sees; later columns
	// are helper columns the rewrite added (sort keys not in the select list,
	// weights, partial sums and counts) and are dropped from the output. 0
	// means all columns (after the Leading ones).
	Visible int
	// Leading is the number of hidden helper columns that come first instead,
	// for a SELECT * whose width only the rows tell: the columns after them
	// are visible. With Leading set, Visible must be 0.
	Leading int
	// OrderBy lists the keys every input is already sorted by; the output is
	// their k-way merge (or, after a hash GROUP BY, the held groups sorted by them).
	OrderBy []OrderKey
	// GroupBy holds the column indexes of the group keys. Rows of all inputs
	// with equal keys (under the column comparison) become one row.
	GroupBy []int
	// Aggregates says which columns hold partial aggregates and how to merge them.
	Aggregates []Aggregate
	// Computed are the columns whose values are expressions over the merged aggregates,
	// written after them (and before HAVING, ORDER BY and DISTINCT read them).
	Computed []Computed
	// Rollup: GROUP BY … WITH ROLLUP. The inputs are sorted by the group keys (OrderBy starts
	// with them, ascending); after the last group of each prefix of the keys comes its subtotal
	// row, the keys after the prefix NULL, and after all groups the total, as the server
	// returns them.
	Rollup bool
	// EmptyGroup: the statement has no GROUP BY but the sub-queries group (by a DISTINCT
	// aggregate's argument), so they may return no row at all; the result then has the one row
	// of aggregates over no rows that the server returns: COUNT 0, the others NULL.
	EmptyGroup bool
	// Checks are hidden columns every input row of a GROUP BY must hold true in (a partial
	// group's test that the sub-queries grouped as the statement's merge does); a row with
	// another value fails the result with ErrNotExact and the check's message.
	Checks []Check
	// Having is evaluated on each merged group row (all columns, hidden
	// included); rows for which it is FALSE or NULL are dropped. nil = none.
	Having Expr
	// Distinct drops rows whose visible columns equal an earlier row's.
	Distinct bool
	// Offset rows are skipped after grouping, HAVING and DISTINCT.
	Offset int64
	// Limit caps the number of rows returned; NoLimit (-1) means no limit, 0 returns no rows.
	Limit int64
	// MaxHeldRows caps the rows held in memory by a hash GROUP BY (groups) or
	// DISTINCT (distinct keys seen). 0 means DefaultMaxHeldRows. Past it, Next
	// returns an error wrapping ErrTooManyRows.
	MaxHeldRows int
	// Weights[i] is the hidden column that holds the server's collation weight
	// of column i (WeightSQL), 0 for none. Every text column the merge
	// compares (ORDER BY, GROUP BY, DISTINCT, MIN, MAX) needs one.
	Weights []int
	// Ordinals[i] is the hidden column that holds, for an ENUM or SET column i, its values'
	// positions in the column's definition (i + 0), which the server orders and groups them
	// by; 0 for none. An ENUM or SET column that is ordered needs one.
	Ordinals []int
	// Collations[i] is, for a column with a weight, the signature of its
	// collation as the server gave it (SignatureSQL); nil when the server does
	// not take the column for a string (INET6, UUID).
	Collations [][]byte
	// Stale, when set, is called when a row's weight is of another collation
	// than Collations says: the statement's remembered types are out of date.
	Stale func()
	// TypesFrom is the input whose column types are those of one server
	// answering the statement: a sub-query over one table. Its types decide
	// how columns compare and are what the result reports. Ignored when
	// ColumnTypes is set.
	TypesFrom int
	// ColumnTypes, when set, are the column types of one server answering the
	// statement (read from a sub-query over one table), one per column
	// including hidden ones; they replace TypesFrom.
	ColumnTypes []ColumnType
}

// ColumnType is what a server reports about one result column, as the
// database/sql/driver RowsColumnType* interfaces expose it.
type ColumnType struct {
	DatabaseTypeName string
	// Precision and Scale are reported when HasPrecisionScale is set.
	Precision, Scale  int64
	HasPrecisionScale bool
	// Length is reported when HasLength is set.
	Length    int64
	HasLength bool
	// Nullable is reported when HasNullable is set.
	Nullable, HasNullable bool
	// ScanType is the Go type a value scans into; nil means any.
	ScanType reflect.Type
}

// IsText reports whether the merge compares values of the type as text, by a collation: with
// their weights (see Spec.Weights).
func (t ColumnType) IsText() bool { return kindOfType(t.DatabaseTypeName) == kindText }

// Check is one of Spec.Checks: a hidden column and, when a row fails it, what the statement
// asks that the merge cannot answer and how to rewrite it.
type Check struct {
	Column  int
	Refusal string
}

// OrderKey is one ORDER BY key: a column index and its direction.
type OrderKey struct {
	Column int
	Desc   bool
}

// AggFunc names the aggregate function whose partial results are merged.
type AggFunc uint8

// Aggregate functions whose partials can be merged.
const (
	AggCount  AggFunc = iota + 1 // COUNT: partial counts are summed
	AggSum                       // SUM: partial sums are summed exactly (DECIMAL) or as DOUBLE
	AggMin                       // MIN: smallest partial under the column comparison
	AggMax                       // MAX: largest partial under the column comparison
	AggAvg                       // AVG: total SUM / total COUNT, rounded as the server rounds it
	AggBitAnd                    // BIT_AND: the AND of the partials (all ones over no rows)
	AggBitOr                     // BIT_OR: the OR of the partials (0 over no rows)
	AggBitXor                    // BIT_XOR: the XOR of the partials (0 over no rows)
)

// String returns the SQL name of the function.
func (f AggFunc) String() string {
	switch f {
	case AggCount:
		return "COUNT"
	case AggSum:
		return "SUM"
	case AggMin:
		return "MIN"
	case AggMax:
		return "MAX"
	case AggAvg:
		return "AVG"
	case AggBitAnd:
		return "BIT_AND"
	case AggBitOr:
		return "BIT_OR"
	case AggBitXor:
		return "BIT_XOR"
	}
	return fmt.Sprintf("AggFunc(%d)", uint8(f))
}

// ArgKind says what the argument of an AVG is made of, which bounds the
// number of digits the server keeps inside its division (see the package doc).
type ArgKind uint8

// Argument kinds of an AVG.
const (
	// ArgOther: anything else (functions, CASE, …): its digits are not known.
	ArgOther ArgKind = iota
	// ArgColumn: a column, a literal, or a function that fixes its digits (ROUND(x, n),
	// TRUNCATE(x, n), FLOOR, CEIL, CAST): the server keeps exactly its scale.
	ArgColumn
	// ArgArithmetic: +, -, *, / and unary minus over columns and literals: the
	// server keeps at least the result's scale.
	ArgArithmetic
)

// Aggregate is one aggregate column of the result.
type Aggregate struct {
	Func AggFunc
	// Column is the aggregate as the statement wrote it. Its type is the
	// result's; its partials are merged, except an AVG's, whose value comes
	// from Sum and Count. The merged value is written back to it.
	Column int
	// Sum is, for AVG, the hidden column holding the partial SUM of the argument.
	Sum int
	// Exact is, for SUM and AVG, the hidden column holding the partial sum
	// with every digit the server keeps (CAST(SUM(x) AS DECIMAL(65,38)), NULL
	// when that cast is not exact), when the argument's partial sums are
	// rounded for display (an argument with a division); 0 when they are not.
	Exact int
	// Count is, for AVG, the hidden column holding the partial COUNT of the
	// argument. The total count is written back to it.
	Count int
	// Increment is, for AVG, the hidden column holding the server session's
	// div_precision_increment.
	Increment int
	// Arg is, for AVG, what the argument is made of.
	Arg ArgKind
	// Mode is, for AVG of anything but a column, the hidden column that tells whether the
	// server rounds or cuts the quotient's digits to the result's scale: (SUM(x) * 0 + 2) / 3
	// (AvgModeSQL), divided as the AVG is; 0 when Arg says it.
	Mode int
	// Distinct is, for COUNT, SUM and AVG of DISTINCT x (COUNT(DISTINCT x, y, …)), the hidden
	// columns holding x (y, …): the sub-queries group by them too, and the merge counts or adds
	// each value (list of values without NULL) once per group, compared as the columns compare,
	// text by its weight; nil for none. The aggregate's own column and, for AVG, Sum and Count
	// are then not read (but for the Go type of a COUNT).
	Distinct []int
	// Carry lists, for MIN and MAX, hidden columns whose values belong to the
	// partial row whose MIN or MAX wins (a HAVING comparison computed on it);
	// the merged row takes them from that row. The column's weight is carried
	// without being listed.
	Carry []int
}

var (
	// ErrColumnsDiffer means the inputs do not have the same columns: every
	// sub-query of one statement must select the same number of columns with the same names.
	ErrColumnsDiffer = errors.New("merge: sub-query results have different columns")
	// ErrTooManyRows means a hash GROUP BY or DISTINCT needed to hold more rows
	// than Spec.MaxHeldRows; narrow the query, make the inputs sorted by the
	// group keys, or raise the cap.
	ErrTooManyRows = errors.New("merge: too many rows held in memory")
	// ErrInvalidSpec means the Spec cannot be applied to the inputs (a column
	// index out of range, an unknown aggregate or operator, a negative offset…).
	ErrInvalidSpec = errors.New("merge: invalid merge spec")
	// ErrNoInputs means New was called without any sub-query result.
	ErrNoInputs = errors.New("merge: no sub-query results to merge")
	// ErrBadValue means a partial aggregate could not be read as a number
	// (for example a SUM partial that is not a decimal literal).
	ErrBadValue = errors.New("merge: bad partial aggregate value")
	// ErrNotExact means the merge cannot reproduce what one server would
	// answer (a comparison or a rounding the sub-queries do not carry enough to
	// repeat); the message says what and how to rewrite the statement. It is
	// routing.ErrNotMergeable: a refusal found while merging is the same
	// refusal as one found while planning.
	ErrNotExact = errors.New("obroute: statement cannot be split and merged correctly")
)

// invalidf and notExactf are not inlined: they are called at many places,
// none of them on a row's path.
//
//go:noinline
func invalidf(format string, args ...any) error {
	return errorf("%w: "+format, append([]any{ErrInvalidSpec}, args...)...)
}

// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func notExactf(format string, args ...any) error {
	return errorf("%w: "+format, append([]any{ErrNotExact}, args...)...)
}

// columnBounds checks the column numbers of a spec against inputs of n
// columns, the first visible of them visible (or the first leading of them
// leading, before the visible ones). Its methods are not inlined: validate
// calls them at many places, none of them on a row's path.
type columnBounds struct{ n, visible, leading int }

//go:noinline
func (b columnBounds) column(what string, i int) error {
	if i < 0 || i >= b.n {
		return invalidf("%s column %d is out of range: the inputs have %d columns (0..%d)", what, i, b.n, b.n-1)
	}
	return nil
}

//go:noinline
func (b columnBounds) hidden(what string, i int) error {
	if b.leading > 0 && i >= 0 && i < b.leading {
		return nil
	}
	if i < b.visible || i >= b.n {
		return invalidf("%s column %d is not a hidden column: the inputs have %d columns, %d visible", what, i, b.n, b.visible)
	}
	return nil
}

// validate checks the spec against n columns and returns the visible count.
func (s *Spec) validate(n, inputs int) (int, error) {
	visible := s.Visible
	if visible == 0 {
		visible = n
	}
	if visible < 0 || visible > n {
		return 0, invalidf("Visible = %d, the inputs have %d columns", s.Visible, n)
	}
	if s.Leading != 0 && (s.Visible != 0 || s.Leading < 0 || s.Leading >= n) {
		return 0, invalidf("Leading = %d with Visible = %d: the inputs have %d columns", s.Leading, s.Visible, n)
	}
	b := columnBounds{n: n, visible: visible, leading: s.Leading}
	col, hidden := b.column, b.hidden
	for _, k := range s.OrderBy {
		if err := col("ORDER BY", k.Column); err != nil {
			return 0, err
		}
	}
	for _, g := range s.GroupBy {
		if err := col("GROUP BY", g); err != nil {
			return 0, err
		}
	}
	for _, a := range s.Aggregates {
		if a.Func < AggCount || a.Func > AggBitXor {
			return 0, invalidf("unknown aggregate function %v on column %d", a.Func, a.Column)
		}
		if err := col(a.Func.String(), a.Column); err != nil {
			return 0, err
		}
		if a.Exact != 0 {
			if err := hidden(a.Func.String()+" exact sum", a.Exact); err != nil {
				return 0, err
			}
		}
		if a.Mode != 0 {
			if err := hidden("AVG mode", a.Mode); err != nil {
				return 0, err
			}
		}
		if len(a.Distinct) > 0 {
			if a.Func != AggCount && (a.Func != AggSum && a.Func != AggAvg || len(a.Distinct) > 1) {
				return 0, invalidf("%s on column %d cannot be DISTINCT of %d arguments: only COUNT, SUM and AVG, of one argument but COUNT", a.Func, a.Column, len(a.Distinct))
			}
			for _, c := range a.Distinct {
				if err := hidden(a.Func.String()+" DISTINCT argument", c); err != nil {
					return 0, err
				}
			}
		}
		for _, c := range a.Carry {
			if err := hidden(a.Func.String()+" carried", c); err != nil {
				return 0, err
			}
		}
		if a.Func == AggAvg {
			for _, h := range []struct {
				what string
				i    int
			}{{"AVG sum", a.Sum}, {"AVG count", a.Count}, {"AVG div_precision_increment", a.Increment}} {
				if err := hidden(h.what, h.i); err != nil {
					return 0, invalidf("AVG on column %d needs hidden SUM, COUNT and div_precision_increment columns: %w", a.Column, err)
				}
			}
		}
	}
	for _, c := range s.Checks {
		if err := hidden("check", c.Column); err != nil {
			return 0, err
		}
		if len(s.GroupBy) == 0 {
			return 0, invalidf("check column %d without GROUP BY", c.Column)
		}
	}
	for _, c := range s.Computed {
		if err := col("computed", c.Column); err != nil {
			return 0, err
		}
		if c.Expr == nil {
			return 0, invalidf("computed column %d has no expression", c.Column)
		}
		if c.Increment != 0 {
			if err := hidden("computed div_precision_increment", c.Increment); err != nil {
				return 0, err
			}
		}
	}
	for i, w := range s.Weights {
		if w == 0 {
			continue
		}
		if err := col("weighted", i); err != nil {
			return 0, err
		}
		if err := hidden("weight", w); err != nil {
			return 0, err
		}
		if i >= len(s.Collations) {
			return 0, invalidf("column %d has a weight but no collation signature (Spec.Collations)", i)
		}
	}
	for i, o := range s.Ordinals {
		if o == 0 {
			continue
		}
		if err := col("ordered", i); err != nil {
			return 0, err
		}
		if err := hidden("ordinal", o); err != nil {
			return 0, err
		}
	}
	if s.Rollup && (len(s.GroupBy) == 0 || !s.StreamsGroups()) {
		return 0, invalidf("Rollup needs GROUP BY and inputs sorted by the group keys (OrderBy)")
	}
	if s.Offset < 0 {
		return 0, invalidf("Offset = %d is negative", s.Offset)
	}
	if s.Limit < NoLimit {
		return 0, invalidf("Limit = %d: use NoLimit (-1) for no limit", s.Limit)
	}
	if s.MaxHeldRows < 0 {
		return 0, invalidf("MaxHeldRows = %d is negative (0 means the default %d)", s.MaxHeldRows, DefaultMaxHeldRows)
	}
	if s.ColumnTypes != nil && len(s.ColumnTypes) != n {
		return 0, invalidf("ColumnTypes has %d entries, the inputs have %d columns", len(s.ColumnTypes), n)
	}
	if s.ColumnTypes == nil && (s.TypesFrom < 0 || s.TypesFrom >= inputs) {
		return 0, invalidf("TypesFrom = %d, there are %d inputs", s.TypesFrom, inputs)
	}
	return visible, nil
}
