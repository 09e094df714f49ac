package routing

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/merge"
)

// ExplainLine is one line of a route explanation: one row of EXPLAIN ROUTE's result set, one
// line of `obroute explain`.
type ExplainLine struct {
	// Section is SectionPrompts or SectionPlan.
	Section string
	// Step is, in the prompts section, the prompt's level (INFO, WARN, ERROR); in the plan
	// section, the step's name (SQL_PARSE, HINTS, ROUTE_INFO, SUB_QUERY, MERGE).
	Step string
	// Detail is the prompt's sentence, or the step's fields written {key:value, …} with strings
	// quoted, as ODP writes them.
	Detail string
}

// Sections of a route explanation, in ODP's words.
const (
	SectionPrompts = "Route Prompts"
	SectionPlan    = "Route Plan"
)

// ExplainColumns are the column names of EXPLAIN ROUTE's result set, one per ExplainLine field:
// section, step, detail. They are stable: scripts may select them by name.
var ExplainColumns = []string{"section", "step", "detail"}

// ExplainOptions complete a plan with what the router does not know.
type ExplainOptions struct {
	// Address returns the network address (host:port, or SERVICE:name) of a backend, never its
	// credentials; nil, or "" for a backend, leaves the address out.
	Address func(backend string) string
	// Command is the protocol command the statement arrived with; "" means COM_QUERY.
	Command string
}

func (o ExplainOptions) address(backend string) string {
	if o.Address == nil {
		return ""
	}
	return o.Address(backend)
}

// Explain renders the plan for EXPLAIN ROUTE and `obroute explain`, in this order:
//
//   - Route Prompts: one INFO line per prompt of the route (Plan.Prompts), e.g. "Will route to
//     last connected server since current query in transaction".
//   - Route Plan: SQL_PARSE (command, statement kind, tables, placeholders); HINTS (the hints in
//     force, in OBROUTE syntax); ROUTE_INFO (route_info_type, class, backend(s) and address,
//     in_transaction, shadow, query_level, budget); one SUB_QUERY per target (backend, address,
//     cold, physical tables, the SQL sent and its arguments); MERGE when the rows of several
//     targets are merged (order keys, group keys, aggregates, distinct, offset, limit).
//
// Merge columns are numbered from 1 over the sub-queries' select lists, as in ORDER BY 1.
func (p *Plan) Explain(o ExplainOptions) []ExplainLine {
	lines := make([]ExplainLine, 0, len(p.Prompts)+4+len(p.Targets))
	for _, pr := range p.Prompts {
		lines = append(lines, ExplainLine{SectionPrompts, "INFO", pr})
	}
	lines = append(lines, parseStep(p.Statement, o), ExplainLine{SectionPlan, "HINTS", fields{}.str("hints", p.Hints.String()).String()})
	backends := p.Backends()
	info := fields{}.str("route_info_type", string(p.Type)).str("class", p.Class.String())
	if len(backends) == 1 {
		info = info.str("backend", backends[0])
		if a := o.address(backends[0]); a != "" {
			info = info.str("addr", a)
		}
	} else {
		info = info.str("backends", strings.Join(backends, ","))
	}
	info = info.bool("in_transaction", p.InTransaction).bool("shadow", p.Shadow).str("query_level", p.Level.String())
	if p.Budget > 0 {
		info = info.str("budget", p.Budget.String())
	}
	lines = append(lines, ExplainLine{SectionPlan, "ROUTE_INFO", info.String()})
	for i, t := range p.Targets {
		f := fields{}.int("index", int64(i+1)).str("backend", t.Backend)
		if a := o.address(t.Backend); a != "" {
			f = f.str("addr", a)
		}
		f = f.bool("cold", t.Cold)
		if len(t.Tables) > 0 {
			f = f.str("tables", strings.Join(t.Tables, ","))
		}
		sql := t.SQL
		if sql == p.Statement.SQL {
			sql = p.Statement.LogText()
		}
		f = f.str("sql", sql).raw("args", argsText(t.Args))
		lines = append(lines, ExplainLine{SectionPlan, "SUB_QUERY", f.String()})
	}
	if p.Merge != nil {
		lines = append(lines, ExplainLine{SectionPlan, "MERGE", mergeFields(p.Merge).String()})
	}
	return lines
}

// ExplainRefused renders the refusal of st with err: an ERROR prompt with the error's text,
// the SQL_PARSE step, and a ROUTE_INFO step with the refusal reason (RefusalReason).
func ExplainRefused(st *Statement, err error, o ExplainOptions) []ExplainLine {
	return []ExplainLine{
		{SectionPrompts, "ERROR", "Will not route: " + err.Error()},
		parseStep(st, o),
		{SectionPlan, "ROUTE_INFO", fields{}.bool("refused", true).str("reason", RefusalReason(err)).String()},
	}
}

func parseStep(st *Statement, o ExplainOptions) ExplainLine {
	cmd := o.Command
	if cmd == "" {
		cmd = "COM_QUERY"
	}
	f := fields{}.str("cmd", cmd).str("kind", st.Kind.String()).str("tables", strings.Join(st.Tables, ","))
	if st.Params > 0 {
		f = f.int("params", int64(st.Params))
	}
	if st.ParseErr != nil {
		f = f.str("parse_error", st.parseProblem())
	}
	return ExplainLine{SectionPlan, "SQL_PARSE", f.String()}
}

func mergeFields(m *merge.Spec) fields {
	f := fields{}
	if len(m.OrderBy) > 0 {
		keys := make([]string, len(m.OrderBy))
		for i, k := range m.OrderBy {
			keys[i] = "col" + strconv.Itoa(k.Column+1)
			if k.Desc {
				keys[i] += " DESC"
			}
		}
		f = f.str("order_by", strings.Join(keys, ","))
	}
	if len(m.GroupBy) > 0 {
		keys := make([]string, len(m.GroupBy))
		for i, c := range m.GroupBy {
			keys[i] = "col" + strconv.Itoa(c+1)
		}
		f = f.str("group_by", strings.Join(keys, ","))
	}
	if len(m.Aggregates) > 0 {
		aggs := make([]string, len(m.Aggregates))
		for i, a := range m.Aggregates {
			aggs[i] = a.Func.String() + "(col" + strconv.Itoa(a.Column+1)
			if a.Func == merge.AggAvg {
				aggs[i] += ", sum col" + strconv.Itoa(a.Sum+1) + ", count col" + strconv.Itoa(a.Count+1)
			}
			if a.Exact != 0 {
				aggs[i] += ", exact col" + strconv.Itoa(a.Exact+1)
			}
			if len(a.Distinct) > 0 {
				cols := make([]string, len(a.Distinct))
				for j, c := range a.Distinct {
					cols[j] = "col" + strconv.Itoa(c+1)
				}
				aggs[i] += ", distinct values of " + strings.Join(cols, " ")
			}
			aggs[i] += ")"
		}
		f = f.str("aggregates", strings.Join(aggs, ","))
	}
	if len(m.Computed) > 0 {
		cs := make([]string, len(m.Computed))
		for i, c := range m.Computed {
			cs[i] = "col" + strconv.Itoa(c.Column+1) + " = " + c.Expr.String()
		}
		f = f.str("computed", strings.Join(cs, ","))
	}
	if n := weighedColumns(m.Weights); n > 0 {
		f = f.int("weighed_columns", int64(n))
	}
	if m.Rollup {
		f = f.bool("rollup", true)
	}
	if m.Having != nil {
		f = f.bool("having", true)
	}
	if m.Distinct {
		f = f.bool("distinct", true)
	}
	if m.Offset > 0 {
		f = f.int("offset", m.Offset)
	}
	if m.Limit != merge.NoLimit {
		f = f.int("limit", m.Limit)
	}
	if m.Leading > 0 {
		f = f.int("leading_hidden_columns", int64(m.Leading))
	}
	if m.Visible > 0 {
		f = f.int("visible_columns", int64(m.Visible))
	}
	if len(f) == 0 {
		f = f.str("rows", "concatenated")
	}
	return f
}

// weighedColumns counts the columns compared by their server weights.
func weighedColumns(w []int) int {
	n := 0
	for _, c := range w {
		if c != 0 {
			n++
		}
	}
	return n
}

// WriteExplain writes lines as text, the way `obroute explain` prints them:
//
//	Route Prompts
//	  [INFO] range [2025-01-10 00:00:00, +inf) on order_time: 2 hot table(s), level L1
//	Route Plan
//	  > SQL_PARSE:{cmd:"COM_QUERY", kind:"SELECT", tables:"orders"}
//
//go:noinline
func WriteExplain(w io.Writer, lines []ExplainLine) error {
	var b strings.Builder
	section := ""
	for _, l := range lines {
		if l.Section != section {
			section = l.Section
			b.WriteString(section)
			b.WriteByte('\n')
		}
		if l.Section == SectionPrompts {
			fmt.Fprintf(&b, "  [%s] %s\n", l.Step, l.Detail)
		} else {
			fmt.Fprintf(&b, "  > %s:%s\n", l.Step, l.Detail)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Refusal reasons, as RefusalReason names them in stats, logs and EXPLAIN ROUTE.
var refusalReasons = []struct {
	err  error
	name string
}{
	{ErrLevelViolation, "level_violation"},
	{ErrNoTimeRange, "no_time_range"},
	{ErrShardKeyFunction, "shard_key_function"},
	{ErrBadTimeValue, "bad_time_value"},
	{ErrShardKeyType, "shard_key_type"},
	{ErrTimeZone, "time_zone"},
	{ErrColdQueryRequired, "cold_query_required"},
	{ErrColdWrite, "cold_write"},
	{ErrCrossBackendWrite, "cross_backend_write"},
	{ErrNoShardTable, "no_shard_table"},
	{ErrTimeShardedJoin, "time_sharded_join"},
	{ErrNotMergeable, "not_mergeable"},
	{ErrTimeConfig, "time_config"},
	{hint.ErrMalformedHint, "hint_malformed"},
	{hint.ErrUnknownHint, "hint_unknown"},
	{hint.ErrHintConflict, "hint_conflict"},
	{ErrUnknownBackend, "unknown_backend"},
	{ErrCrossBackendTx, "cross_backend_tx"},
	{ErrCrossBackend, "cross_backend"},
	{ErrShadowConflict, "shadow_conflict"},
	{ErrNoShadowBackend, "no_shadow_backend"},
	{ErrMixedShadow, "mixed_shadow"},
	{ErrUnreadable, "unreadable"},
	{ErrMultiStatement, "multi_statement"},
	{ErrLogicalTable, "logical_table"},
	{ErrDDLInTransaction, "ddl_in_transaction"},
	{ErrCatalog, "catalog"},
}

// RefusalReasonOther names a refusal by none of the package's sentinels.
const RefusalReasonOther = "other"

var refusalNames = func() []string {
	out := make([]string, 0, len(refusalReasons)+1)
	for _, r := range refusalReasons {
		out = append(out, r.name)
	}
	return append(out, RefusalReasonOther)
}()

// RefusalReasons lists every name RefusalReason returns, RefusalReasonOther last; stats keep one
// counter per name, at the index RefusalIndex returns.
func RefusalReasons() []string { return append([]string(nil), refusalNames...) }

// RefusalReason names why the router refused a statement, from the sentinel err wraps:
// "level_violation" (ErrLevelViolation), "no_time_range", "shard_key_function",
// "bad_time_value", "shard_key_type", "time_zone", "cold_query_required", "cold_write", "cross_backend_write",
// "no_shard_table", "time_sharded_join", "not_mergeable", "time_config", "hint_malformed",
// "hint_unknown", "hint_conflict" (package hint's errors), "unknown_backend",
// "cross_backend_tx", "cross_backend", "shadow_conflict", "no_shadow_backend", "unreadable",
// "multi_statement", else "other".
func RefusalReason(err error) string { return refusalNames[RefusalIndex(err)] }

// RefusalIndex returns the index of RefusalReason(err) in RefusalReasons().
func RefusalIndex(err error) int {
	for i, r := range refusalReasons {
		if errors.Is(err, r.err) {
			return i
		}
	}
	return len(refusalReasons)
}

// fields builds a {key:value, …} detail in order. Its methods are not
// inlined: EXPLAIN names them at many places, and each inlined copy would grow
// every binary that imports the driver (see driver/import_test.go).
type fields []string

//go:noinline
func (f fields) raw(k, v string) fields { return append(f, k+":"+v) }

func (f fields) str(k, v string) fields { return f.raw(k, strconv.Quote(v)) }

//go:noinline
func (f fields) bool(k string, v bool) fields { return f.raw(k, strconv.FormatBool(v)) }

func (f fields) int(k string, v int64) fields { return f.raw(k, strconv.FormatInt(v, 10)) }

//go:noinline
func (f fields) String() string { return "{" + strings.Join(f, ", ") + "}" }

// argsText writes bound arguments as a list of SQL-like literals.
func argsText(args []driver.NamedValue) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = valueLiteral(a.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func valueLiteral(v driver.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case []byte:
		return strconv.Quote(string(x))
	case time.Time:
		return strconv.Quote(x.UTC().Format("2006-01-02 15:04:05.999999"))
	case bool:
		return strconv.FormatBool(x)
	default:
		return fmt.Sprint(x)
	}
}
