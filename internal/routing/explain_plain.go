package routing

import (
	"strings"

	"github.com/obroute/obroute/hint"
)

// A plain EXPLAIN (EXPLAIN [EXTENDED | PARTITIONS | FORMAT=JSON] stmt, DESCRIBE stmt) or MariaDB's
// ANALYZE [FORMAT=JSON] stmt of a statement on a time-sharded table is the EXPLAIN of each of the
// statement's sub-queries, sent to the sub-query's backend: the answer is the rows of all of them,
// one target after the other in plan order, each naming its physical tables. EXPLAIN ROUTE stays
// obroute's own view of the route.

// plainExplainAt returns where the statement a plain EXPLAIN or ANALYZE explains starts in the
// text toks were read from, -1 when the text is not one.
func plainExplainAt(toks []token, lexed bool) int {
	if !lexed || len(toks) < 2 || toks[0].kind != tokWord {
		return -1
	}
	analyze := toks[0].is("analyze")
	if !analyze && !toks[0].is("explain") && !toks[0].is("describe") && !toks[0].is("desc") {
		return -1
	}
	i := 1
	switch {
	case !analyze && (toks[i].is("extended") || toks[i].is("partitions")):
		i++
	case i+2 < len(toks) && toks[i].is("format") && toks[i+1].text == "=":
		i += 3
	}
	if i >= len(toks) {
		return -1
	}
	t := toks[i]
	if t.is("select") || t.is("insert") || t.is("update") || t.is("delete") || t.is("replace") || t.is("with") || t.kind == tokPunct && t.text == "(" {
		return t.pos
	}
	return -1
}

// namesTimeTable reports whether st names a time-sharded table.
func (st *Statement) namesTimeTable(r *Router) bool {
	for _, t := range st.Tables {
		if _, ok := r.time.tables[t]; ok {
			return true
		}
	}
	return false
}

// explainPlainRoute routes a plain EXPLAIN or ANALYZE: as the statement it explains, each target
// sent with the EXPLAIN words before it.
func (r *Router) explainPlainRoute(p *Plan, in Input, sess *SessionState) (bool, error) {
	st := p.Statement
	inner := &Plan{Statement: st.explainOf, Hints: p.Hints, Level: p.Level, InTransaction: p.InTransaction, explain: p.explain}
	iin := in
	iin.Statement = st.explainOf
	pinned, err := r.baseRoute(inner, iin, in.Args, sess)
	if err != nil {
		return pinned, err
	}
	p.Type, p.Class, p.Level, p.Budget, p.Prompts = inner.Type, inner.Class, inner.Level, inner.Budget, inner.Prompts
	if len(inner.Targets) == 1 && inner.Targets[0].SQL == inner.Statement.SQL {
		p.single(inner.Type, inner.Class, inner.Targets[0].Backend, st.SQL, in.Args)
		p.Targets[0].Tables = inner.Targets[0].Tables
		return pinned, nil
	}
	words := st.SQL[hint.StatementStart(st.SQL):st.explainAt]
	if strings.EqualFold(strings.Fields(words)[0], "analyze") && st.explainOf.Kind != KindSelect && len(inner.Targets) > 1 {
		return pinned, errorf("%w: ANALYZE runs the %s, here on %d physical tables one after the other, with no transaction across them; EXPLAIN it instead, or narrow its range to one table",
			ErrNotMergeable, st.explainOf.Kind, len(inner.Targets))
	}
	p.Targets = make([]Target, len(inner.Targets))
	for i, t := range inner.Targets {
		sql := words + t.SQL
		if rest, ok := strings.CutPrefix(t.SQL, coldPrefix); ok {
			sql = coldPrefix + words + rest
		}
		t.SQL = sql
		p.Targets[i] = t
	}
	p.Concat = len(p.Targets) > 1
	if p.explain {
		p.Prompts = append(p.Prompts, "EXPLAIN of each sub-query on its backend: the rows of all, one sub-query after the other")
	}
	return pinned, nil
}
