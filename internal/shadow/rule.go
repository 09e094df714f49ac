package shadow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/obroute/obroute/config"
)

// Operation is the kind of DML statement a column algorithm applies to.
type Operation string

// The DML operations (untyped: they fill an Algorithm's Operation, a string, too).
const (
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
	OpSelect = "select"
)

// AlgorithmKind is how an Algorithm decides.
type AlgorithmKind string

// The algorithm kinds. ShardingSphere's spellings (SIMPLE_HINT, VALUE_MATCH,
// REGEX_MATCH) and upper case are accepted by Validate too.
const (
	KindHint       = "hint"
	KindValueMatch = "value_match"
	KindRegexMatch = "regex_match"
)

// Algorithm is one named shadow algorithm (its Kind an AlgorithmKind, its Operation an
// Operation, in any case).
type Algorithm = config.ShadowAlgorithm

// Table is one shadow table.
type Table = config.ShadowTable

// Mapping maps a production backend to its shadow backend, by name.
type Mapping = config.ShadowMapping

// Rule is a shadow rule. Call Validate once after building or loading it;
// Decide then needs no further checks and is safe for concurrent use as long
// as the Rule is not modified.
type Rule struct {
	// Shadow is the rule as configured (shadow in the configuration); a YAML document of it
	// decodes into a Rule as it does into config.Shadow.
	config.Shadow `yaml:",inline"`

	compiled *compiled
}

// ErrInvalidRule is wrapped by every error Validate returns.
var ErrInvalidRule = errors.New("invalid shadow rule")

// compiled is what Validate derives from a Rule for Decide.
type compiled struct {
	all     map[string]string // every mapping
	tables  []table           // configured order
	def     *algorithm        // default algorithm, nil if none
	defShow string            // Reason when the default accepts
	anyHint bool              // the rule has at least one hint algorithm
}

type table struct {
	name     string
	hint     []tableAlgorithm
	column   []tableAlgorithm
	mappings map[string]string
}

// tableAlgorithm is one algorithm of one table with the Reason it gives.
type tableAlgorithm struct {
	alg    *algorithm
	reason string
}

type algorithm struct {
	name   string
	kind   AlgorithmKind
	column string
	op     Operation
	set    ValueSet
}

// Validate checks the rule and prepares it for Decide. isBackend reports
// whether a name is a configured backend; nil accepts every name. It returns
// every problem found, joined, each wrapping ErrInvalidRule and saying how to
// fix it. A rule that fails validation cannot Decide.
func (r *Rule) Validate(isBackend func(name string) bool) error {
	r.compiled = nil
	if isBackend == nil {
		isBackend = func(string) bool { return true }
	}
	var errs problems
	bad := errs.add
	k := &compiled{all: map[string]string{}}

	shadows := map[string]bool{}
	for i, m := range r.Mappings {
		switch {
		case m.Production == "" || m.Shadow == "":
			bad("mapping %d: give both production and shadow backend names", i+1)
			continue
		case !isBackend(m.Production):
			bad("mapping %d: production backend %q is not a configured backend", i+1, m.Production)
		case !isBackend(m.Shadow):
			bad("mapping %d: shadow backend %q is not a configured backend", i+1, m.Shadow)
		case m.Production == m.Shadow:
			bad("mapping %d: backend %q is mapped to itself; a shadow backend must be a separate backend", i+1, m.Production)
		}
		if _, dup := k.all[m.Production]; dup {
			bad("mapping %d: production backend %q is mapped twice; keep one shadow backend per production backend", i+1, m.Production)
		}
		k.all[m.Production] = m.Shadow
		shadows[m.Shadow] = true
	}
	for _, m := range r.Mappings {
		if shadows[m.Production] {
			bad("backend %q is both a shadow backend and a production backend; shadow traffic must not reach a production backend", m.Production)
		}
	}

	algs := map[string]*algorithm{}
	for i, a := range r.Algorithms {
		if a.Name == "" {
			bad("algorithm %d has no name", i+1)
			continue
		}
		if _, dup := algs[a.Name]; dup {
			bad("algorithm %q is defined twice; give each algorithm a distinct name", a.Name)
			continue
		}
		c, err := compileAlgorithm(a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		algs[a.Name] = c
	}

	if r.DefaultAlgorithm != "" {
		switch a, ok := algs[r.DefaultAlgorithm]; {
		case !ok:
			bad("default algorithm %q is not among the algorithms", r.DefaultAlgorithm)
		case a.kind != KindHint:
			bad("default algorithm %q is of kind %s; the default algorithm must be of kind hint", a.name, a.kind)
		default:
			k.def = a
			k.anyHint = true
			k.defShow = fmt.Sprintf("no shadow table in the statement; default algorithm %q accepted the shadow hint: all mappings apply", a.name)
		}
	}

	seen := map[string]bool{}
	for i, t := range r.Tables {
		name := strings.ToLower(t.Name)
		switch {
		case name == "":
			bad("table %d has no name", i+1)
			continue
		case seen[name]:
			bad("table %q is listed twice; list each shadow table once", t.Name)
			continue
		case len(t.Algorithms) == 0:
			bad("table %q has no algorithms; name at least one", t.Name)
		}
		seen[name] = true
		ct := table{name: name, mappings: k.all}
		for _, an := range t.Algorithms {
			a, ok := algs[an]
			if !ok {
				bad("table %q uses algorithm %q, which is not among the algorithms", t.Name, an)
				continue
			}
			ta := tableAlgorithm{alg: a}
			if a.kind == KindHint {
				ta.reason = fmt.Sprintf("shadow table %q: hint algorithm %q accepted the shadow hint", name, a.name)
				ct.hint = append(ct.hint, ta)
				k.anyHint = true
			} else {
				ta.reason = fmt.Sprintf("shadow table %q: %s algorithm %q accepted the %s values of column %q", name, a.kind, a.name, a.op, a.column)
				ct.column = append(ct.column, ta)
			}
		}
		if len(t.Backends) > 0 {
			ct.mappings = map[string]string{}
			for _, b := range t.Backends {
				s, ok := k.all[b]
				if !ok {
					bad("table %q lists backend %q, which is not the production backend of any mapping", t.Name, b)
					continue
				}
				ct.mappings[b] = s
			}
		}
		k.tables = append(k.tables, ct)
	}

	if len(r.Mappings) == 0 && (len(r.Tables) > 0 || r.DefaultAlgorithm != "") {
		bad("the rule has shadow tables or a default algorithm but no mappings, so nothing could go to a shadow backend; add mappings")
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r.compiled = k
	return nil
}

// invalid returns an error wrapping ErrInvalidRule. It is not inlined:
// validation calls it at many places, none of them on a statement's path.
//
//go:noinline
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRule}, args...)...)
}

// problems collects what is wrong with a rule.
type problems []error

// add records one problem; not inlined, for the reason invalid is not.
//
//go:noinline
func (p *problems) add(format string, args ...any) { *p = append(*p, invalid(format, args...)) }

func compileAlgorithm(a Algorithm) (*algorithm, error) {
	bad := func(format string, args ...any) error {
		return invalid("algorithm %q: "+format, append([]any{a.Name}, args...)...)
	}
	c := &algorithm{name: a.Name, column: strings.ToLower(a.Column), op: Operation(strings.ToLower(string(a.Operation)))}
	switch strings.ToLower(string(a.Kind)) {
	case "hint", "simple_hint":
		c.kind = KindHint
		if a.Column != "" || a.Operation != "" || len(a.Values) > 0 || a.Regex != "" {
			return nil, bad("a hint algorithm takes no column, operation, values or regex; remove them or use kind value_match or regex_match")
		}
		return c, nil
	case "value_match":
		c.kind = KindValueMatch
	case "regex_match":
		c.kind = KindRegexMatch
	default:
		return nil, bad("unknown kind %q; use hint, value_match or regex_match", a.Kind)
	}
	if a.Column == "" {
		return nil, bad("%s needs the column whose values it matches", c.kind)
	}
	switch c.op {
	case OpInsert, OpUpdate, OpDelete, OpSelect:
	default:
		return nil, bad("operation %q: use insert, update, delete or select", a.Operation)
	}
	if c.kind == KindValueMatch {
		if len(a.Values) == 0 || a.Regex != "" {
			return nil, bad("value_match needs values and no regex")
		}
		c.set.Values = append([]string(nil), a.Values...)
		return c, nil
	}
	if a.Regex == "" || len(a.Values) > 0 {
		return nil, bad("regex_match needs a regex and no values")
	}
	re, err := regexp.Compile(`^(?:` + a.Regex + `)$`)
	if err != nil {
		return nil, bad("regex %q does not compile: %v", a.Regex, err)
	}
	c.set.Regex = re
	return c, nil
}
