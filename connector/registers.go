package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/obroute/obroute/internal/merge"
	"github.com/obroute/obroute/internal/routing"
)

// The session functions (ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID()) and the diagnostics
// (SHOW WARNINGS, @@warning_count …) answer for a previous statement, which ran on a server
// session of its own, on several (a statement split across tables), or nowhere (a statement
// obroute answered itself, such as a BEGIN it holds). The client session keeps, for each, where
// one server's answer is: the server session of a backend, a value obroute holds, or nothing it
// can tell (then a statement that reads it is refused, saying why). A statement that reads them
// goes to that backend; values obroute holds are written into it.

// sessionValue is where the value of one session function is.
type sessionValue struct {
	backend string // the server session of this (production) backend answers it
	value   int64  // obroute holds it: value
	held    bool
	why     string // it cannot be told: why
	// orElse, for LAST_INSERT_ID(): the server session of backend answers it unless it answers
	// 0 (it was set to 0 before an INSERT there, which generated no id): then orElse does.
	orElse *sessionValue
	on     *serverSession // with orElse: the server session of backend that ran the INSERT
}

// diagnostics is where the diagnostics of the last statement are: on the server session of
// backend, on the server sessions of a split SELECT's parts (parts, in order), or nowhere one
// server's could be read (why).
type diagnostics struct {
	backend string
	parts   []*serverSession
	why     string
	// unless is the server session of a statement that used no table and ran after them on
	// another backend: if it holds conditions, that statement gave them, and they replace
	// these (one server clears its diagnostics for a statement that uses a table or gives
	// conditions, and keeps them for any other). It is told when they are read (settleDiag),
	// by its @@warning_count against before, what it was before the statement.
	unless *serverSession
	before int64
}

// sessionFuncs are the client session's session functions and diagnostics.
type sessionFuncs struct {
	rowCount, foundRows, insertID sessionValue
	diag                          diagnostics
	// zeroedOn is the backend whose LAST_INSERT_ID() was set to 0 before the INSERT running
	// there (see zeroInsertID); prevInsertID where LAST_INSERT_ID() was before it.
	zeroedOn     string
	zeroed       *serverSession
	prevInsertID sessionValue
	// countedOn is the server session whose @@warning_count was read, countedBefore, before a
	// statement that uses no table ran there away from the diagnostics (see countBefore).
	countedOn     *serverSession
	countedBefore int64
}

func heldValue(v int64) sessionValue { return sessionValue{value: v, held: true} }

// holds reports whether obroute holds the value of a session function (the server session
// would answer another): a statement that reads it must be analysed, never passed through.
func (f *sessionFuncs) holds() bool {
	return f.rowCount.held || f.foundRows.held || f.insertID.held || f.rowCount.why != "" || f.foundRows.why != ""
}

// changesFoundRows reports whether a statement of kind sets FOUND_ROWS() (a SELECT, SHOW, or one
// obroute cannot tell about); INSERT, UPDATE, DELETE, SET, DDL and the like leave it.
func changesFoundRows(st *routing.Statement) bool {
	if st == nil {
		return true
	}
	switch st.Kind {
	case routing.KindInsert, routing.KindUpdate, routing.KindDelete, routing.KindSet, routing.KindUse, routing.KindDDL,
		routing.KindBegin, routing.KindCommit, routing.KindRollback, routing.KindSavepoint, routing.KindXA,
		routing.KindPrepare, routing.KindDeallocate:
		return false
	}
	return true
}

// ran records where the session functions are after a statement of plan ran on the one server
// session s, with res its result (nil for rows).
func (cs *clientSession) ran(plan *routing.Plan, s *serverSession, res driver.Result) {
	b := cs.c.productionOf(s.backend.name)
	f := &cs.funcs
	eff := cs.effective(plan)
	f.rowCount = sessionValue{backend: b}
	if changesFoundRows(eff) {
		f.foundRows = sessionValue{backend: b}
	}
	switch {
	case eff != nil && eff.Kind == routing.KindInsert && f.zeroedOn == b && !plan.Shadow:
		// b's LAST_INSERT_ID() was 0 before it: b answers if the INSERT generated an id.
		prev := f.prevInsertID
		f.insertID = sessionValue{backend: b, orElse: &prev, on: f.zeroed}
	case eff != nil && eff.Kind == routing.KindInsert && !plan.Shadow:
		// LAST_INSERT_ID() was b's (or no server session's) before it: b's answers after it,
		// whether it generated an id or not.
		f.insertID = sessionValue{backend: b}
	case res != nil:
		if id, err := res.LastInsertId(); err == nil && id != 0 {
			f.insertID = sessionValue{backend: b}
		}
	}
	f.zeroedOn = ""
	if eff != nil && eff.SetsInsertID {
		f.insertID = sessionValue{backend: b} // LAST_INSERT_ID(expr) set it there
	}
	counted := f.countedOn == s
	f.countedOn = nil
	switch d := &f.diag; {
	case eff == nil || len(eff.Tables) > 0 || d.backend == "" && d.parts == nil && d.why == "":
		*d = diagnostics{backend: b}
	case d.why != "", d.unless == s, d.unless == nil && d.parts == nil && d.backend == b:
		// It ran where the diagnostics are (or where they cannot be told): it changes nothing
		// obroute can tell.
	case d.unless == nil && d.parts == nil && counted:
		// It used no table: the diagnostics stay those of the statements before it, unless it
		// gave conditions of its own.
		d.unless, d.before = s, f.countedBefore
	default:
		*d = diagnostics{why: "a statement that uses no table ran on another server session than the last statement that used a table, and obroute cannot tell whether it gave the last conditions"}
	}
}

// awayFromDiag reports whether plan's statement, to run on s, uses no table and runs away from
// the server session holding the diagnostics of the statements before it: whether it gives
// conditions of its own is then told from s's @@warning_count, read before (countBefore) and
// when the diagnostics are read (settleDiag).
func (cs *clientSession) awayFromDiag(plan *routing.Plan, s *serverSession) bool {
	d := &cs.funcs.diag
	eff := cs.effective(plan)
	return eff != nil && len(eff.Tables) == 0 && d.why == "" && d.parts == nil && d.unless == nil && d.backend != "" &&
		d.backend != cs.c.productionOf(s.backend.name)
}

// countBefore reads s's @@warning_count before a statement that uses no table runs there away
// from the diagnostics (awayFromDiag).
func (cs *clientSession) countBefore(ctx context.Context, s *serverSession) error {
	n, err := cs.warningCount(ctx, s)
	if err != nil {
		return err
	}
	cs.funcs.countedOn, cs.funcs.countedBefore = s, n
	return nil
}

// warningCount reads s's @@warning_count. The SELECT that reads it changes FOUND_ROWS() and
// ROW_COUNT() there: the values they had, which it reads too, are held when s answers them.
func (cs *clientSession) warningCount(ctx context.Context, s *serverSession) (int64, error) {
	lits, found, count, err := readLiterals(ctx, s, []string{"warning_count"})
	if err != nil {
		return 0, err
	}
	f := &cs.funcs
	b := cs.c.productionOf(s.backend.name)
	if f.foundRows.backend == b && !f.foundRows.held && f.foundRows.why == "" {
		f.foundRows = heldValue(found)
	}
	if f.rowCount.backend == b && !f.rowCount.held && f.rowCount.why == "" {
		f.rowCount = heldValue(count)
	}
	n, _ := strconv.ParseInt(lits[0].value, 10, 64)
	return n, nil
}

// settleDiag tells where the diagnostics are when a statement that used no table ran on another
// server session than theirs (diagnostics.unless): there if its @@warning_count changed since
// before it (it gave conditions of its own), else where they were; when s held as many before
// as after, which cannot be told, reading them is refused.
func (cs *clientSession) settleDiag(ctx context.Context) error {
	d := &cs.funcs.diag
	s := d.unless
	if s == nil {
		return nil
	}
	d.unless = nil
	if s.broken || cs.serverOf(s.backend.name) != s {
		*d = diagnostics{why: "they may be those of a statement that ran on the server session of backend " + s.backend.name + ", which was lost"}
		return nil
	}
	n, err := cs.warningCount(ctx, s)
	switch {
	case err != nil:
		return err
	case n != d.before:
		// A statement that ran there gave conditions: one server shows the last one's.
		*d = diagnostics{backend: cs.c.productionOf(s.backend.name)}
	case n > 0:
		*d = diagnostics{why: "a statement that uses no table ran on another server session than the last statement that used a table, which held conditions before it as many as after, and obroute cannot tell whether it gave them"}
	}
	return nil
}

// ranSplit records where the session functions are after a statement split across tables ran:
// a SELECT whose parts ran on servers (its FOUND_ROWS() is set when its rows are read to the
// end, see countedRows), or a write that changed affected rows in all.
func (cs *clientSession) ranSplit(plan *routing.Plan, servers []*serverSession, affected int64, err error) {
	f := &cs.funcs
	switch {
	case err != nil:
		f.rowCount = heldValue(-1)
		f.diag = diagnostics{why: "the statement split across tables failed, and its error is the one it returned"}
	case plan.Statement.Kind == routing.KindSelect:
		f.rowCount = heldValue(-1)
		f.foundRows = sessionValue{why: "the rows of the SELECT split across tables were not all read"}
		f.diag = diagnostics{parts: servers}
	default:
		f.rowCount = heldValue(affected)
		f.insertID = sessionValue{why: "the INSERT ran as one statement per physical table, each with its own AUTO_INCREMENT"}
		f.diag = diagnostics{why: "the write ran as one statement per physical table, whose warnings obroute does not collect; write one table at a time to see them"}
	}
}

// countedRows counts the rows of a result obroute computed (a merge), to set FOUND_ROWS() when
// they are read to the end.
type countedRows struct {
	*rows
	cs   *clientSession
	n    int64
	done bool
}

// counted returns r, whose rows obroute computed, counting them for FOUND_ROWS().
func (cs *clientSession) counted(r driver.Rows) driver.Rows {
	w, ok := r.(*rows)
	if !ok {
		w = wrapRows(r, nil)
	}
	cs.funcs.foundRows = sessionValue{why: "the rows of the statement obroute merged were not all read"}
	return &countedRows{rows: w, cs: cs}
}

// Next implements driver.Rows.
func (r *countedRows) Next(dest []driver.Value) error {
	err := r.rows.Next(dest)
	switch {
	case err == nil:
		r.n++
	case err == io.EOF && !r.done:
		r.done = true
		r.cs.funcs.foundRows = heldValue(r.n)
	}
	return err
}

// Close implements driver.Rows. A dry run's rows (WithDryRun) count as read to their end:
// `obroute check` reads none, the application it stands for reads them.
func (r *countedRows) Close() error {
	if !r.done && r.cs.c.dryRun {
		r.done = true
		r.cs.funcs.foundRows = heldValue(r.n)
	}
	return r.rows.Close()
}

// resolveSession rewrites a statement that reads session functions so that it reads one
// server's answer: it returns the statement to run (st itself, or st with the values obroute
// holds written in) and the backend whose server session holds the rest; or the rows it
// answers itself (SHOW WARNINGS after a split SELECT); or a refusal. With hold, every value a
// server session holds is read there and written in (the statement's tables are elsewhere).
func (cs *clientSession) resolveSession(ctx context.Context, st *routing.Statement, hold bool) (*routing.Statement, string, driver.Rows, error) {
	f := &cs.funcs
	reads := st.SessionReads
	var vals routing.SessionValues
	at := ""
	if reads&routing.ReadsDiagnostics != 0 {
		if err := cs.settleDiag(ctx); err != nil {
			return nil, "", nil, err
		}
		switch d := f.diag; {
		case d.why != "":
			return nil, "", nil, errorf("%w: the statement reads diagnostics (SHOW WARNINGS, @@warning_count …), and %s", routing.ErrSessionState, d.why)
		case d.parts != nil:
			if rows, ok, err := cs.partsDiagnostics(ctx, st, d.parts); ok || err != nil {
				return nil, "", rows, err
			}
			counts, err := cs.partsCounts(ctx, d.parts)
			if err != nil {
				return nil, "", nil, err
			}
			vals.Reads |= routing.ReadsDiagnostics
			vals.WarningCount, vals.ErrorCount = counts[0], counts[1]
		case hold && cs.orLast(d.backend) != "":
			s, err := cs.server(ctx, cs.orLast(d.backend))
			if err != nil {
				return nil, "", nil, err
			}
			counts, err := cs.partsCounts(ctx, []*serverSession{s})
			if err != nil {
				return nil, "", nil, err
			}
			vals.Reads |= routing.ReadsDiagnostics
			vals.WarningCount, vals.ErrorCount = counts[0], counts[1]
		default:
			at = d.backend
		}
	}
	if reads&routing.ReadsInsertID != 0 && f.insertID.orElse != nil {
		// Told first: reading it may hold FOUND_ROWS() and ROW_COUNT() of its server session.
		if err := cs.settleInsertID(ctx); err != nil {
			return nil, "", nil, err
		}
	}
	for _, r := range [...]struct {
		read routing.SessionReads
		v    *sessionValue
		fn   string
	}{{routing.ReadsFoundRows, &f.foundRows, "FOUND_ROWS()"}, {routing.ReadsRowCount, &f.rowCount, "ROW_COUNT()"}, {routing.ReadsInsertID, &f.insertID, "LAST_INSERT_ID()"}} {
		if reads&r.read == 0 {
			continue
		}
		switch v := *r.v; {
		case v.why != "":
			return nil, "", nil, errorf("%w: the statement reads %s, and %s; one server's value cannot be told", routing.ErrSessionState, r.fn, v.why)
		case v.held:
			vals.Set(r.read, v.value)
		case hold && cs.orLast(v.backend) == "":
			// No statement ran yet: the server session the statement goes to answers.
		case !hold && (at == "" || v.backend == at):
			at = v.backend
		default:
			// Two server sessions hold what it reads, or its tables are elsewhere: the value
			// is read where it is and written in.
			n, err := cs.readFunction(ctx, cs.orLast(v.backend), r.fn)
			if err != nil {
				return nil, "", nil, err
			}
			*r.v = heldValue(n)
			vals.Set(r.read, n)
		}
	}
	if vals.Reads == 0 {
		return st, at, nil, nil
	}
	text, ok := st.WithSessionValues(vals)
	if !ok {
		return nil, "", nil, errorf("%w: the statement reads session functions whose values obroute holds (the last statement was split across tables) where it cannot write them in; read them in a SELECT of their own (SELECT ROW_COUNT())", routing.ErrSessionState)
	}
	return cs.c.router.Analyze(text), at, nil, nil
}

// zeroInsertID readies s, of backend b, for the INSERT eff: when LAST_INSERT_ID() is another
// server session's (or a value obroute holds or cannot tell), the INSERT moves it to s only if it
// generates an id, which neither its result (it carries an id given explicitly too) nor rows
// tell; so s's LAST_INSERT_ID(), which no statement of the client session reads until then, is
// set to 0 first, and read when the client session reads it (settleInsertID).
func (cs *clientSession) zeroInsertID(ctx context.Context, s *serverSession, eff *routing.Statement) error {
	f := &cs.funcs
	f.zeroedOn = ""
	if eff == nil || eff.Kind != routing.KindInsert || eff.SetsInsertID || cs.c.dryRun || s.shadow {
		return nil
	}
	if f.insertID.orElse != nil {
		// Where the last INSERT left it is told first: setting s's to 0 may lose it.
		if err := cs.settleInsertID(ctx); err != nil {
			return err
		}
	}
	b := cs.c.productionOf(s.backend.name)
	at := f.insertID
	if at.backend == "" && !at.held && at.why == "" && at.orElse == nil {
		return nil // no INSERT ran yet: every server session answers 0 or what s will
	}
	if at.backend == b {
		return nil
	}
	if _, err := s.exec(ctx, "SET @@session.last_insert_id = 0", nil, false); err != nil {
		return err
	}
	f.zeroedOn, f.zeroed, f.prevInsertID = b, s, at
	return nil
}

// settleInsertID tells where LAST_INSERT_ID() is after an INSERT before which its backend's was
// set to 0 (zeroInsertID): there, unless it answers 0. Reading it changes FOUND_ROWS() and
// ROW_COUNT() there: the values they had, which it reads too, are held.
func (cs *clientSession) settleInsertID(ctx context.Context) error {
	f := &cs.funcs
	v := f.insertID
	s := v.on
	if s == nil || s.broken || cs.serverOf(v.backend) != s {
		f.insertID = sessionValue{why: "the server session of backend " + v.backend + ", where the last INSERT ran, was lost"}
		return nil
	}
	lits, found, count, err := readLiterals(ctx, s, []string{"last_insert_id"})
	if err != nil {
		return err
	}
	if f.foundRows.backend == v.backend && !f.foundRows.held {
		f.foundRows = heldValue(found)
	}
	if f.rowCount.backend == v.backend && !f.rowCount.held {
		f.rowCount = heldValue(count)
	}
	if lits[0].value == "0" {
		f.insertID = *v.orElse
	} else {
		f.insertID = sessionValue{backend: v.backend}
	}
	return nil
}

// readFunction reads a session function (FOUND_ROWS() …) on backend's server session.
func (cs *clientSession) readFunction(ctx context.Context, backend, fn string) (int64, error) {
	s, err := cs.server(ctx, backend)
	if err != nil {
		return 0, err
	}
	return cs.readSessionNumber(ctx, s, fn)
}

// partsCounts sums @@warning_count and @@error_count over the server sessions of a split
// SELECT's parts.
func (cs *clientSession) partsCounts(ctx context.Context, parts []*serverSession) ([2]int64, error) {
	var sum [2]int64
	for _, s := range parts {
		if s.broken || cs.serverOf(s.backend.name) != s {
			return sum, errorf("%w: the diagnostics of the statement split across tables were lost with the server session of backend %s", routing.ErrSessionState, s.backend.name)
		}
		rows, err := s.query(ctx, "SELECT @@warning_count, @@error_count"+oneRow, nil, false)
		if err != nil {
			return sum, err
		}
		dest := make([]driver.Value, 2)
		err = rows.Next(dest)
		rows.Close()
		if err != nil {
			return sum, err
		}
		for i := range sum {
			text, _ := valueText(dest[i])
			n, _ := strconv.ParseInt(text, 10, 64)
			sum[i] += n
		}
	}
	return sum, nil
}

// partsDiagnostics answers SHOW WARNINGS or SHOW ERRORS [LIMIT [offset,] n] after a split SELECT
// as one server would: the parts' conditions in order, at most max_error_count of them, then the
// LIMIT. ok is false for any other statement.
func (cs *clientSession) partsDiagnostics(ctx context.Context, st *routing.Statement, parts []*serverSession) (driver.Rows, bool, error) {
	show, offset, limit, ok := routing.ShowDiagnostics(st.SQL)
	if !ok {
		return nil, false, nil
	}
	if len(parts) == 0 {
		return nil, true, errors.New("obroute: internal error: a split SELECT without parts")
	}
	maxErrors, err := cs.readSessionNumber(ctx, parts[0], "@@max_error_count")
	if err != nil {
		return nil, true, err
	}
	results := make([]driver.Rows, 0, len(parts))
	closeAll := func() {
		for _, r := range results {
			r.Close()
		}
	}
	for _, s := range parts {
		if s.broken || cs.serverOf(s.backend.name) != s {
			closeAll()
			return nil, true, errorf("%w: the diagnostics of the statement split across tables were lost with the server session of backend %s", routing.ErrSessionState, s.backend.name)
		}
		r, err := s.query(ctx, show, nil, false)
		if err != nil {
			closeAll()
			return nil, true, err
		}
		results = append(results, r)
	}
	// One server keeps max_error_count conditions: the LIMIT applies to those.
	keep := maxErrors - offset
	if limit != merge.NoLimit && limit < keep {
		keep = limit
	}
	merged, err := merge.New(merge.Spec{Offset: offset, Limit: max(keep, 0)}, results)
	if err != nil {
		closeAll()
		return nil, true, err
	}
	cs.funcs.rowCount = heldValue(-1)
	return cs.counted(merged), true, nil
}

// readSessionNumber reads a numeric expression on s.
func (cs *clientSession) readSessionNumber(ctx context.Context, s *serverSession, expr string) (int64, error) {
	rows, err := s.query(ctx, "SELECT "+expr+oneRow, nil, false)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return 0, err
	}
	text, ok := valueText(dest[0])
	if !ok {
		return 0, nil // NULL: a dry run's server session
	}
	return strconv.ParseInt(strings.TrimSpace(text), 10, 64)
}

// runsWhereSession reports whether every target of plan, a statement reading session functions,
// runs on the server session that holds what it reads (or none holds anything yet).
func (cs *clientSession) runsWhereSession(plan *routing.Plan) bool {
	at := cs.routing.SessionBackend
	if at == "" {
		at = cs.routing.LastBackend
	}
	if at == "" {
		return true
	}
	for _, t := range plan.Targets {
		if cs.c.productionOf(t.Backend) != at {
			return false
		}
	}
	return true
}

// orLast returns backend, or when it is "" (no statement said where the value is) the backend
// of the last statement, where the router sends a statement reading it.
func (cs *clientSession) orLast(backend string) string {
	if backend == "" {
		return cs.routing.LastBackend
	}
	return backend
}
