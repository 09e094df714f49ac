package routing

import (
	"database/sql/driver"
	"slices"
	"strings"
)

// Analyze returns the analysis of sql, from the cache when the same text, or the same text
// with other literal values (see normalize.go), was seen before. A hit on a normalized key
// costs the statement's own copy of the analysis (one allocation; two with more than 6
// literals read as arguments), and for a statement of more than 1 KiB or 16 literals, its key
// and literals besides.
func (r *Router) Analyze(sql string) *Statement {
	if st, ok := r.cache.get(sql); ok {
		return st
	}
	if len(sql) > r.cache.maxEntry {
		return r.analyzeText(sql)
	}
	var (
		key  [1024]byte
		lits [16]literal
	)
	if bound := literalBound(sql); len(sql) >= len(key) || bound > len(lits) {
		// Buffers that need not grow, adopted by the statement on a hit.
		n, ok := normalizeLiterals(sql, make([]byte, 0, len(sql)+1), make([]literal, 0, bound), false)
		e, st := r.findKey(sql, &n, ok)
		if e == nil {
			return st
		}
		return e.st.withLits(sql, n.lits, e.mode == entryArgs)
	}
	n, ok := normalizeLiterals(sql, key[:0], lits[:0], false)
	e, st := r.findKey(sql, &n, ok)
	if e == nil {
		return st
	}
	return e.st.withText(sql, n.lits, e.mode == entryArgs)
}

// findKey returns the entry of n, the normalized key of sql (ok false: sql has none), when it
// holds the analysis, counting a hit; else no entry and the analysis of sql.
func (r *Router) findKey(sql string, n *normalized, ok bool) (*cacheEntry, *Statement) {
	if !ok {
		return nil, r.analyzeText(sql)
	}
	e := r.cache.find(n.key)
	switch {
	case e == nil:
		r.cache.misses.Add(1)
		return nil, r.keepNormalized(sql, r.analyze(sql, nil))
	case e.st == nil: // its texts are kept by themselves
		return nil, r.analyzeText(sql)
	}
	r.cache.hit(e)
	return e, nil
}

// analyzeText returns the analysis of sql kept under its text, analysing it on a miss.
func (r *Router) analyzeText(sql string) *Statement {
	if st, ok := r.cache.get(sql); ok {
		return st
	}
	r.cache.misses.Add(1)
	st := r.analyze(sql, nil)
	if sql != "" && sql[0] != keyMark {
		r.cache.put(sql, st, entryText)
	}
	return st
}

// keepNormalized keeps the analysis of the texts of sql's normalized key, st being the
// analysis of sql:
//   - st itself when routing reads none of the replaced literals (no time-sharded table, no
//     shadow algorithm reading column values): every text of the key is routed alike;
//   - else the analysis of the normalized text, which reads the literals as arguments, when it
//     routes this text as st does (sameAnalysis);
//   - else nothing under the key but a note to key each text by itself: a statement the parser
//     cannot read, a refused one, and one whose literals are read with clauses set aside or
//     executable comments.
//
// It returns the analysis for the text just read: st, or the kept one for it.
func (r *Router) keepNormalized(sql string, st *Statement) *Statement {
	n, _ := normalizeLiterals(sql, nil, nil, true)
	key := string(n.key)
	switch {
	case !st.Kind.IsDML() || st.ParseErr != nil || st.RouteErr != nil || st.HintErr != nil || st.scanned:
	case st.time == nil && st.shadowReads == nil:
		r.cache.put(key, st, entryShared)
		return st
	case !n.exec && st.aside == nil:
		sn := r.analyze(normalizedText(n.key), n.slots)
		sn.Params = st.Params
		if sameAnalysis(st, sn, n.lits) {
			r.cache.put(key, sn, entryArgs)
			// What the execution learns (the column types of a split SELECT) is kept for all.
			return sn.withLits(st.SQL, n.lits, true)
		}
	}
	r.cache.put(key, nil, entryByText)
	r.cache.put(st.SQL, st, entryText)
	return st
}

// litStatement is a Statement with room for its literals, allocated as one.
type litStatement struct {
	Statement
	buf [6]literal
}

// withText returns a copy of st, the analysis kept for a normalized key, for the text sql
// whose replaced literals are lits; args: st reads them as arguments, copied.
func (st *Statement) withText(sql string, lits []literal, args bool) *Statement {
	if !args {
		return st.copyFor(sql)
	}
	if len(lits) > len(litStatement{}.buf) {
		return st.withLits(sql, slices.Clone(lits), true)
	}
	ls := new(litStatement)
	ls.Statement = *st
	ls.SQL, ls.logText = sql, maskSecrets(sql)
	ls.lits = ls.buf[:copy(ls.buf[:], lits)]
	return &ls.Statement
}

// withLits is withText for literals the copy may keep.
func (st *Statement) withLits(sql string, lits []literal, args bool) *Statement {
	cp := st.copyFor(sql)
	if args {
		cp.lits = lits
	}
	return cp
}

// copyFor returns a copy of st for the text sql.
func (st *Statement) copyFor(sql string) *Statement {
	cp := new(Statement)
	*cp = *st
	cp.SQL, cp.logText = sql, maskSecrets(sql)
	return cp
}

// readArgs returns the arguments routing reads for args: args themselves, and the literals the
// cache key replaced when st reads them as arguments (see routeArgs).
func (st *Statement) readArgs(args []driver.NamedValue) []driver.NamedValue {
	if st.lits == nil {
		return args
	}
	return st.routeArgs(args)
}

// argNumber is the number by which the application knows the i-th argument routing reads.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func argNumber(args []driver.NamedValue, i int) int {
	n := i + 1
	for _, a := range args[:min(i, len(args))] {
		if _, ok := a.Value.(*literal); ok {
			n--
		}
	}
	return n
}

// givenArgs is the number of arguments the application gave among the arguments routing reads.
func givenArgs(args []driver.NamedValue) int {
	return argNumber(args, len(args)) - 1
}

// routeArgs returns the arguments routing reads: args, and the statement's literals at their
// placeholders' places, each as a *literal (read as the literal is, never sent).
func (st *Statement) routeArgs(args []driver.NamedValue) []driver.NamedValue {
	out := make([]driver.NamedValue, 0, len(args)+len(st.lits))
	a, k := 0, 0
	for slot := 0; a < len(args) || k < len(st.lits); slot++ {
		switch {
		case k < len(st.lits) && int(st.litSlots[k]) == slot:
			out = append(out, driver.NamedValue{Ordinal: slot + 1, Value: &st.lits[k]})
			k++
		case a < len(args):
			out = append(out, args[a])
			a++
		default: // fewer arguments than ? placeholders: the route says so
			return out
		}
	}
	return out
}

// sameAnalysis reports whether norm, the analysis of a normalized text, routes the text whose
// analysis is orig as orig does, with that text's literals lits as arguments: the same kind,
// tables, refusals and shadow columns, and the same rewritten statements once the literals are
// written back. The shard-key range is read by one code for literals and arguments.
func sameAnalysis(orig, norm *Statement, lits []literal) bool {
	if norm.ParseErr != nil || norm.RouteErr != nil || norm.HintErr != nil || norm.scanned || norm.aside != nil ||
		orig.Kind != norm.Kind || orig.SessionDependent != norm.SessionDependent || !slices.Equal(orig.Tables, norm.Tables) ||
		len(orig.shadowReads) != len(norm.shadowReads) || (orig.time == nil) != (norm.time == nil) {
		return false
	}
	user := func(arg int) (int, bool) { // norm's placeholder index → orig's, or a literal
		k := 0
		for k < len(norm.litSlots) && int(norm.litSlots[k]) < arg {
			k++
		}
		if k < len(norm.litSlots) && int(norm.litSlots[k]) == arg {
			return k, false
		}
		return arg - k, true
	}
	for i, a := range orig.shadowReads {
		if !sameRead(a, norm.shadowReads[i], user, lits) {
			return false
		}
	}
	a, b := orig.time, norm.time
	if a == nil {
		return true
	}
	if a.table != b.table || a.kind != b.kind || a.key != b.key || a.qual != b.qual || a.qualSQL != b.qualSQL ||
		a.conj != b.conj || a.clocked != b.clocked || a.returning != b.returning ||
		(a.merge == nil) != (b.merge == nil) || (a.mergeErr == nil) != (b.mergeErr == nil) ||
		(a.splitErr == nil) != (b.splitErr == nil) || (a.insert == nil) != (b.insert == nil) {
		return false
	}
	same := func(x, y *template) bool {
		if x.rowsAt != y.rowsAt || !slices.Equal(x.args, mapArgs(y.args, user)) || !slices.Equal(x.snips, y.snips) {
			return false
		}
		var clock stmtClock
		lx, ly := leg{table: "t", key: "k", clock: &clock}, leg{table: "t", key: "k", clock: &clock, lits: lits}
		var bx, by strings.Builder
		x.render(&bx, &lx)
		y.render(&by, &ly)
		return sameTokens(bx.String(), by.String())
	}
	if !same(&a.whole, &b.whole) {
		return false
	}
	if a.merge != nil {
		ma, mb := a.merge, b.merge
		if !same(&ma.legT, &mb.legT) || !same(&ma.probeT, &mb.probeT) || !same(&ma.sigT, &mb.sigT) || ma.outer != mb.outer || ma.pushLimit != mb.pushLimit ||
			ma.sorted != mb.sorted || ma.distinctWeighed != mb.distinctWeighed || ma.unionTypesExact != mb.unionTypesExact ||
			(ma.limitArg < 0) != (mb.limitArg < 0) || (ma.offsetArg < 0) != (mb.offsetArg < 0) ||
			ma.spec.Limit != mb.spec.Limit || ma.spec.Offset != mb.spec.Offset || len(ma.weightCols) != len(mb.weightCols) ||
			!slices.Equal(ma.sigNames, mb.sigNames) {
			return false
		}
	}
	if a.insert != nil {
		if len(a.insert.rows) != len(b.insert.rows) || a.insert.keyCol != b.insert.keyCol {
			return false
		}
		for i := range a.insert.rows {
			if !same(&a.insert.rows[i], &b.insert.rows[i]) {
				return false
			}
		}
	}
	return true
}

// mapArgs maps the placeholder indexes of a normalized text's template to the application's,
// -1 for a literal (never among a template's arguments).
func mapArgs(args []int, user func(int) (int, bool)) []int {
	out := make([]int, len(args))
	for i, a := range args {
		out[i] = -1
		if j, ok := user(a); ok {
			out[i] = j
		}
	}
	return out
}

// sameTokens reports whether two statement texts are the same tokens: words in any case,
// strings by value, whatever their quotes and escapes.
func sameTokens(x, y string) bool {
	tx, okx := lex(x)
	ty, oky := lex(y)
	if !okx || !oky || len(tx) != len(ty) {
		return false
	}
	for i := range tx {
		a, b := tx[i], ty[i]
		if a.kind != b.kind || a.national != b.national {
			return false
		}
		switch a.kind {
		case tokString, tokIdent, tokVar:
			if a.val != b.val {
				return false
			}
		default:
			if !strings.EqualFold(a.text, b.text) {
				return false
			}
		}
	}
	return true
}
