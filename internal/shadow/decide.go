package shadow

import (
	"fmt"
	"regexp"
	"strings"
)

// Condition is what the router knows about one statement.
type Condition struct {
	// Tables are the statement's tables, lower case, in statement order.
	Tables []string
	// Operation is the DML operation, "" for any other statement (DDL, DCL,
	// SET, SHOW …).
	Operation Operation
	// Hint is true when the shadow hint is on for this statement.
	Hint bool
	// Read says what the statement's values of column of table (lower case)
	// say of the shadow values set of one column algorithm: whether the rows
	// the statement writes or reads have shadow values, as the server compares
	// them. why explains VerdictMixed and VerdictUnread. nil reads nothing:
	// every column algorithm then sees VerdictNone.
	Read func(table, column string, set ValueSet) (v Verdict, why string)
}

// Verdict is what a statement's values say of one column algorithm.
type Verdict uint8

const (
	// VerdictNone: the statement gives the column no value (an INSERT that
	// does not name it, a WHERE that does not compare it): the algorithm does
	// not accept, as in ShardingSphere.
	VerdictNone Verdict = iota
	// VerdictProduction: no row the statement writes or reads has a shadow
	// value.
	VerdictProduction
	// VerdictShadow: every row the statement writes or reads has a shadow value.
	VerdictShadow
	// VerdictMixed: some rows have shadow values and some do not (a multi-row
	// INSERT of both, a WHERE that reaches both).
	VerdictMixed
	// VerdictUnread: obroute cannot read the values as the server compares
	// them (an expression, a subquery, a column type it does not compare).
	VerdictUnread
)

// ValueSet is the shadow values of a column algorithm, as text: the Values
// of a value_match algorithm, or every text its Regex matches in full.
type ValueSet struct {
	Values []string
	Regex  *regexp.Regexp
}

// Contains reports whether text is one of the shadow values.
func (s ValueSet) Contains(text string) bool {
	if s.Regex != nil {
		return s.Regex.MatchString(text)
	}
	for _, v := range s.Values {
		if v == text {
			return true
		}
	}
	return false
}

// Decision is the outcome of Decide.
type Decision struct {
	// Shadow is true when the statement is shadow traffic.
	Shadow bool
	// Mappings are the production → shadow backend replacements to apply,
	// nil for production. The map is shared: do not modify it.
	Mappings map[string]string
	// Reason says in plain words which table and algorithm matched, or why
	// the statement is production traffic.
	Reason string
	// Refused is set when a column algorithm could not decide (VerdictMixed
	// or VerdictUnread) before any accepted: the statement must be refused,
	// neither shadow nor production traffic. It says why, naming the table
	// and column.
	Refused string
}

// Reasons for the decisions that need no names. Those that send a
// statement carrying the shadow hint to production say so first.
const (
	reasonNonDMLShadow      = "the shadow hint is on for a statement other than DML: all mappings apply"
	reasonNonDML            = "production: a statement other than DML goes to shadow only with the shadow hint"
	reasonHintNoAlgorithm   = "production although the shadow hint is on: the shadow rule has no hint algorithm"
	reasonNoShadowTable     = "production: no shadow table in the statement and no default algorithm"
	reasonHintNoShadowTable = "production although the shadow hint is on: no shadow table in the statement and no default algorithm"
	reasonDefaultNoHint     = "production: no shadow table in the statement and no shadow hint for the default algorithm"
	reasonTablesRejected    = "production: none of the statement's shadow tables has an algorithm that accepted"
	reasonHintTablesReject  = "production although the shadow hint is on: the statement's shadow tables have no hint algorithm and no column algorithm accepted"
)

// Decide evaluates the rule for one statement as the package doc describes.
// It panics if the rule has not passed Validate: that is a programming error,
// and guessing would risk sending shadow traffic to production.
func (r *Rule) Decide(c Condition) Decision {
	k := r.compiled
	if k == nil {
		panic("shadow: Rule.Decide called on a rule that has not passed Rule.Validate")
	}
	if c.Operation == "" {
		switch {
		case c.Hint && k.anyHint:
			return Decision{Shadow: true, Mappings: k.all, Reason: reasonNonDMLShadow}
		case c.Hint:
			return Decision{Reason: reasonHintNoAlgorithm}
		}
		return Decision{Reason: reasonNonDML}
	}

	named := false
	for i := range k.tables {
		t := &k.tables[i]
		if !names(c.Tables, t.name) {
			continue
		}
		named = true
		if !c.Hint {
			break
		}
		if len(t.hint) > 0 {
			return Decision{Shadow: true, Mappings: t.mappings, Reason: t.hint[0].reason}
		}
	}
	if !named {
		switch {
		case k.def == nil && c.Hint:
			return Decision{Reason: reasonHintNoShadowTable}
		case k.def == nil:
			return Decision{Reason: reasonNoShadowTable}
		case !c.Hint:
			return Decision{Reason: reasonDefaultNoHint}
		}
		return Decision{Shadow: true, Mappings: k.all, Reason: k.defShow}
	}
	for i := range k.tables {
		t := &k.tables[i]
		if !names(c.Tables, t.name) {
			continue
		}
		for _, ta := range t.column {
			if ta.alg.op != c.Operation || c.Read == nil {
				continue
			}
			switch v, why := c.Read(t.name, ta.alg.column, ta.alg.set); v {
			case VerdictShadow:
				return Decision{Shadow: true, Mappings: t.mappings, Reason: ta.reason}
			case VerdictMixed, VerdictUnread:
				return Decision{Refused: fmt.Sprintf("shadow table %q: %s algorithm %q cannot decide from the %s values of column %q: %s",
					t.name, ta.alg.kind, ta.alg.name, ta.alg.op, ta.alg.column, why)}
			}
		}
	}
	if c.Hint {
		return Decision{Reason: reasonHintTablesReject}
	}
	return Decision{Reason: reasonTablesRejected}
}

func names(tables []string, name string) bool {
	for _, t := range tables {
		if strings.EqualFold(t, name) {
			return true
		}
	}
	return false
}

// ReadsColumns reports whether Decide looks at column values for a statement naming table
// (lower case): table is a shadow table with a value or regex algorithm. The router extracts
// column values only then. It panics on a rule that has not passed Validate.
func (r *Rule) ReadsColumns(table string) bool {
	k := r.compiled
	if k == nil {
		panic("shadow: Rule.ReadsColumns called on a rule that has not passed Rule.Validate")
	}
	for _, t := range k.tables {
		if t.name == table {
			return len(t.column) > 0
		}
	}
	return false
}

// ColumnAlgorithm is one column algorithm of a shadow table, as the router
// reads values for it.
type ColumnAlgorithm struct {
	Name      string
	Column    string // lower case
	Operation Operation
	Set       ValueSet
}

// ColumnAlgorithms returns the column algorithms of shadow table table (lower
// case), in configured order; nil when it has none. It panics on a rule that
// has not passed Validate.
func (r *Rule) ColumnAlgorithms(table string) []ColumnAlgorithm {
	k := r.compiled
	if k == nil {
		panic("shadow: Rule.ColumnAlgorithms called on a rule that has not passed Rule.Validate")
	}
	for _, t := range k.tables {
		if t.name == table {
			out := make([]ColumnAlgorithm, 0, len(t.column))
			for _, ta := range t.column {
				out = append(out, ColumnAlgorithm{Name: ta.alg.name, Column: ta.alg.column, Operation: ta.alg.op, Set: ta.alg.set})
			}
			return out
		}
	}
	return nil
}
