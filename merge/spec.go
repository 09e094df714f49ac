package merge

import (
	"errors"
	"fmt"
)

// NoLimit is the Spec.Limit value that means "no LIMIT clause".
const NoLimit int64 = -1

// DefaultMaxHeldRows is the cap on rows held in memory when Spec.MaxHeldRows is 0.
const DefaultMaxHeldRows = 1_000_000

// Spec describes how the rows of several sub-query results become one result.
//
// Column indexes count from 0 over the sub-query's select list, hidden helper
// columns included. The zero Spec is not "no limit": set Limit to NoLimit.
type Spec struct {
	// Visible is the number of leading columns the caller sees; later columns
	// are helper columns the rewrite added (sort keys not in the select list,
	// COUNT for AVG) and are dropped from the output. 0 means all columns.
	Visible int
	// OrderBy lists the keys every input is already sorted by; the output is
	// their k-way merge (or, after a hash GROUP BY, the held groups sorted by them).
	OrderBy []OrderKey
	// GroupBy holds the column indexes of the group keys. Rows of all inputs
	// with equal keys (under the column comparison) become one row.
	GroupBy []int
	// Aggregates says which columns hold partial aggregates and how to merge them.
	Aggregates []Aggregate
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
	// Kinds optionally overrides how column i is compared (Kinds[i]); KindAuto
	// entries, and columns past the end, are inferred from the database type
	// name of the first input that reports one. Use it when the schema says
	// more than the wire does (a VARCHAR with a _bin collation is KindBinary).
	Kinds []Kind
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
	AggCount AggFunc = iota + 1 // COUNT: partial counts are summed
	AggSum                      // SUM: partial sums are summed exactly (DECIMAL) or as DOUBLE
	AggMin                      // MIN: smallest partial under the column comparison
	AggMax                      // MAX: largest partial under the column comparison
	AggAvg                      // AVG: total SUM / total COUNT, DECIMAL scale + 4
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
	}
	return fmt.Sprintf("AggFunc(%d)", uint8(f))
}

// Aggregate is one aggregate column of the result.
type Aggregate struct {
	Func AggFunc
	// Column holds the partial aggregate (for AggAvg: the partial SUM); the
	// merged value is written back to it.
	Column int
	// CountColumn is, for AggAvg only, the hidden column holding the partial
	// COUNT of the same argument. The total count is written back to it.
	CountColumn int
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
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSpec}, args...)...)
}

// validate checks the spec against n columns and returns the visible count.
func (s *Spec) validate(n int) (int, error) {
	visible := s.Visible
	if visible == 0 {
		visible = n
	}
	if visible < 0 || visible > n {
		return 0, invalidf("Visible = %d, the inputs have %d columns", s.Visible, n)
	}
	col := func(what string, i int) error {
		if i < 0 || i >= n {
			return invalidf("%s column %d is out of range: the inputs have %d columns (0..%d)", what, i, n, n-1)
		}
		return nil
	}
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
		if a.Func < AggCount || a.Func > AggAvg {
			return 0, invalidf("unknown aggregate function %v on column %d", a.Func, a.Column)
		}
		if err := col(a.Func.String(), a.Column); err != nil {
			return 0, err
		}
		if a.Func == AggAvg {
			if err := col("AVG count", a.CountColumn); err != nil {
				return 0, err
			}
			if a.CountColumn == a.Column {
				return 0, invalidf("AVG on column %d uses the same column for its COUNT; the rewrite must add a separate COUNT column", a.Column)
			}
		}
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
	if len(s.Kinds) > n {
		return 0, invalidf("Kinds has %d entries, the inputs have %d columns", len(s.Kinds), n)
	}
	for i, k := range s.Kinds {
		if k > KindBinary {
			return 0, invalidf("Kinds[%d] = %d is not a known Kind", i, k)
		}
	}
	return visible, nil
}
