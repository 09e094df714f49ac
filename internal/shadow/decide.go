package shadow

import "strings"

// Condition is what the router knows about one statement.
type Condition struct {
	// Tables are the statement's tables, lower case, in statement order.
	Tables []string
	// Operation is the DML operation, "" for any other statement (DDL, DCL,
	// SET, SHOW …).
	Operation Operation
	// Hint is true when the shadow hint is on for this statement.
	Hint bool
	// Columns are the DML column values the router found: lower-case
	// column name → values as text.
	Columns map[string][]string
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
			if ta.alg.accepts(c) {
				return Decision{Shadow: true, Mappings: t.mappings, Reason: ta.reason}
			}
		}
	}
	if c.Hint {
		return Decision{Reason: reasonHintTablesReject}
	}
	return Decision{Reason: reasonTablesRejected}
}

// accepts reports whether a column algorithm accepts the statement: same
// operation, and the column has values, every one of them a shadow value.
func (a *algorithm) accepts(c Condition) bool {
	if c.Operation != a.op {
		return false
	}
	values := c.Columns[a.column]
	if len(values) == 0 {
		return false
	}
	for _, v := range values {
		if a.re != nil && !a.re.MatchString(v) || a.re == nil && !a.values[v] {
			return false
		}
	}
	return true
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
