package connector

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/merge"
	"github.com/obroute/obroute/internal/routing"
)

// errRetyped is returned by the execution of a split SELECT that has just read the column
// types one server reports for it (see routing.TypesCache): the statement is routed again, and
// its sub-queries rendered for those types.
var errRetyped = errors.New("obroute: internal: split statement's column types read, route it again")

// queryTargets runs the targets of a split query concurrently, one per backend, and merges
// their rows. The first error cancels the others. prepared runs them in the binary protocol, as
// the application's prepared statement runs on one server (a FLOAT in the text protocol has
// six digits: 16777216 comes back 1.67772e7).
func (cs *clientSession) queryTargets(ctx context.Context, plan *routing.Plan, prepared bool) (driver.Rows, error) {
	servers := make([]*serverSession, len(plan.Targets))
	for i, t := range plan.Targets {
		s, err := cs.splitServer(ctx, plan, t.Backend)
		if err != nil {
			return nil, err
		}
		for _, other := range servers[:i] {
			if other == s {
				return nil, errorf("obroute: internal error: plan sends two row streams to backend %s", t.Backend)
			}
		}
		if err := cs.sync(ctx, s); err != nil {
			return nil, err
		}
		servers[i] = s
	}
	if cs.c.dryRun {
		return emptyRows{}, nil // no sub-query runs (dryrun.go)
	}
	probe := func() error {
		t, _ := plan.TypesProbe()
		for i, pt := range plan.Targets {
			if pt.Backend == t.Backend {
				return cs.learnTypes(ctx, servers[i], plan, t)
			}
		}
		return errorf("obroute: internal error: the column types probe goes to backend %s, which has no sub-query", t.Backend)
	}
	if plan.TypesUnknown() {
		if err := probe(); err != nil {
			return nil, err
		}
		return nil, errRetyped
	}
	results, cancel, err := cs.fanOut(ctx, plan, servers, prepared)
	cs.ranSplit(plan, servers, 0, err)
	if err != nil {
		return nil, err
	}
	spec, ok := mergeSpec(plan, results, cs.takeProbed(plan))
	if !ok {
		// The sub-queries' types are not those remembered (a session setting, an argument's
		// type or a table's definition changed): read them again and run the statement anew.
		for _, r := range results {
			r.Close()
		}
		cancel()
		if err := probe(); err != nil {
			return nil, err
		}
		return nil, errRetyped
	}
	if err := plan.CheckRepeatedHours(resultTypes(results)); err != nil {
		for _, r := range results {
			r.Close()
		}
		cancel()
		return nil, err
	}
	merged, err := merge.New(spec, results)
	if err != nil {
		cancel()
		return nil, err
	}
	return wrapRows(merged, func() error { cancel(); return nil }), nil
}

// queryUnion runs a split query whose tables all live on one backend (one UNION ALL) and
// merges its legs.
func (cs *clientSession) queryUnion(ctx context.Context, plan *routing.Plan, prep *stmt) (driver.Rows, error) {
	if cs.c.dryRun { // its one target runs on a dry server session, no probe, nothing to merge
		_, rows, err := cs.runTarget(ctx, plan, plan.Targets[0], true, prep)
		if err != nil {
			return nil, err
		}
		rows.Close()
		return emptyRows{}, nil
	}
	probe := func() error {
		t, _ := plan.TypesProbe()
		s, err := cs.server(ctx, cs.readBackend(plan, t.Backend))
		if err != nil {
			return err
		}
		if err := cs.sync(ctx, s); err != nil {
			return err
		}
		return cs.learnTypes(ctx, s, plan, t)
	}
	if plan.TypesUnknown() {
		if err := probe(); err != nil {
			return nil, err
		}
		return nil, errRetyped
	}
	_, rows, err := cs.runTarget(ctx, plan, plan.Targets[0], true, prep)
	if s := cs.serverOf(plan.Targets[0].Backend); s != nil {
		cs.ranSplit(plan, []*serverSession{s}, 0, err)
	}
	if err != nil {
		return nil, err
	}
	spec, ok := mergeSpec(plan, []driver.Rows{rows}, cs.takeProbed(plan))
	if !ok {
		rows.Close()
		if err := probe(); err != nil {
			return nil, err
		}
		return nil, errRetyped
	}
	if err := plan.CheckRepeatedHours(resultTypes([]driver.Rows{rows})); err != nil {
		rows.Close()
		return nil, err
	}
	return merge.New(spec, []driver.Rows{rows})
}

// resultTypes returns the database type name of a result column: TIMESTAMP when any of
// results reports it so, "" past the last column.
func resultTypes(results []driver.Rows) func(col int) string {
	return func(col int) string {
		name := ""
		for _, r := range results {
			n, ok := r.(driver.RowsColumnTypeDatabaseTypeName)
			if !ok || col >= len(r.Columns()) {
				continue
			}
			if name = n.ColumnTypeDatabaseTypeName(col); strings.EqualFold(name, "TIMESTAMP") {
				return name
			}
		}
		return name
	}
}

// learnTypes reads the column types one server reports for plan's statement with the probe t
// on s and remembers them, for the plan's statement (which columns are text) and for the
// client session's next run of it (what its UNIONs stand for, in this session's settings).
func (cs *clientSession) learnTypes(ctx context.Context, s *serverSession, plan *routing.Plan, t routing.Target) error {
	rows, err := s.query(ctx, t.SQL, t.Args, false)
	if err != nil {
		return err
	}
	types := merge.ReadColumnTypes(rows)
	if err := rows.Close(); err != nil {
		return err
	}
	var sigs [][]byte
	if st, ok := plan.SignatureProbe(types); ok {
		if sigs, err = readSignatures(ctx, s, st); err != nil {
			return err
		}
	}
	plan.Types.Store(nil, types, sigs)
	cs.probed = probedTypes{plan.Types, types, sigs}
	return nil
}

// readSignatures runs the statement that reads the signatures of the weighed collations (see
// routing.Plan.SignatureProbe) on s: its one row.
func readSignatures(ctx context.Context, s *serverSession, t routing.Target) ([][]byte, error) {
	rows, err := s.query(ctx, t.SQL, t.Args, false)
	if err != nil {
		return nil, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	err = rows.Next(dest)
	var sigs [][]byte
	if err == nil {
		for _, v := range dest {
			b, _ := v.([]byte)
			sigs = append(sigs, bytes.Clone(b))
		}
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return sigs, err
}

// probedTypes are the types a client session's last probe read, for the statement whose
// cache is of.
type probedTypes struct {
	of    *routing.TypesCache
	types []merge.ColumnType
	sigs  [][]byte
}

// takeProbed returns the types the client session's last probe read for plan's statement, if
// it was the last probe, and forgets them.
func (cs *clientSession) takeProbed(plan *routing.Plan) probedTypes {
	p := cs.probed
	cs.probed = probedTypes{}
	if p.of == nil || p.of != plan.Types {
		return probedTypes{}
	}
	return p
}

// mergeSpec returns the plan's merge spec with the source of the column types one server
// reports: a sub-query over one table (its types are one server's by construction), the UNION
// itself when its types are one table's, or the types read by the session's last probe
// (probed) or remembered for the UNIONs' types. ok is
// false when the types are not those the sub-queries were rendered for: a column whose weight
// was not asked for is text, or the UNIONs report types not seen before.
func mergeSpec(plan *routing.Plan, results []driver.Rows, probed probedTypes) (merge.Spec, bool) {
	spec := *plan.Merge
	if plan.Types != nil {
		spec.Stale = plan.Types.Forget
	}
	for _, c := range plan.SkippedWeights() {
		for _, r := range results {
			if n, ok := r.(driver.RowsColumnTypeDatabaseTypeName); ok && (merge.ColumnType{DatabaseTypeName: n.ColumnTypeDatabaseTypeName(c)}).IsText() {
				return spec, false
			}
		}
	}
	for i, t := range plan.Targets {
		if len(t.Tables) == 1 {
			spec.TypesFrom = i
			return spec, true
		}
	}
	if plan.Types == nil || plan.UnionTypesExact() {
		return spec, true
	}
	union := merge.ReadColumnTypes(results[0])
	if probed.types != nil {
		// Read by this client session just before: in its settings.
		plan.Types.Store(union, probed.types, probed.sigs)
		spec.ColumnTypes = probed.types
		return spec, true
	}
	one, ok := plan.Types.Lookup(union)
	spec.ColumnTypes = one
	return spec, ok
}

// fanOut runs each target on its server session concurrently; cancel ends their context. The
// first sub-query to fail stops the others: their context is cancelled, or, when the caller's
// context cannot be cancelled, their connections are interrupted (see connWatch.interrupt), so
// that no context go-sql-driver must watch is added to a statement that had none: with one,
// go-sql-driver hands each statement to its watcher goroutine and back, two goroutine wake-ups
// per statement. The error returned is the first failure's. prepared runs the targets in the
// binary protocol.
func (cs *clientSession) fanOut(ctx context.Context, plan *routing.Plan, servers []*serverSession, prepared bool) ([]driver.Rows, context.CancelFunc, error) {
	f := &fan{plan: plan, servers: servers, ctx: ctx, cancel: func() {}, first: -1, interruptible: ctx.Done() == nil, prepared: prepared}
	for _, s := range servers {
		f.interruptible = f.interruptible && s.watch.canInterrupt()
	}
	if !f.interruptible {
		f.ctx, f.cancel = context.WithCancel(ctx)
	}
	n := len(plan.Targets)
	f.results = make([]driver.Rows, n)
	f.errs = make([]error, n)
	// One target runs on the caller's goroutine, at once: one goroutine fewer to start and wake.
	// A new goroutine waits for a thread to wake and take it (tens to hundreds of µs when the
	// server's threads hold the cores), so the caller takes the target likely to take longest,
	// the one over the most tables, and the others start while it runs.
	lead := 0
	for i, t := range plan.Targets {
		if len(t.Tables) > len(plan.Targets[lead].Tables) {
			lead = i
		}
	}
	f.wg.Add(n - 1)
	for i := range n {
		if i != lead {
			go f.runDone(i)
		}
	}
	f.run(lead)
	f.wg.Wait()
	if f.first < 0 {
		return f.results, f.cancel, nil
	}
	for i, r := range f.results {
		if r != nil {
			r.Close()
		}
		if s := servers[i]; s.watch.wasInterrupted() {
			s.broken = true
			s.backend.killQuery(s, errPartFailed)
		}
		cs.dropBroken(servers[i])
	}
	f.cancel()
	return nil, nil, f.errs[f.first]
}

// fan is one fan-out of a split query's targets (see fanOut), in one allocation.
type fan struct {
	plan          *routing.Plan
	servers       []*serverSession
	ctx           context.Context // the sub-queries' context
	cancel        context.CancelFunc
	interruptible bool // a failure interrupts the others' connections instead of cancelling ctx
	prepared      bool // the sub-queries run in the binary protocol
	results       []driver.Rows
	errs          []error
	failed        sync.Once
	first         int // the target that failed first; -1 none
	wg            sync.WaitGroup
}

// run runs target i; the first to fail stops the others.
func (f *fan) run(i int) {
	t := f.plan.Targets[i]
	f.results[i], f.errs[i] = f.servers[i].query(f.ctx, t.SQL, t.Args, f.prepared)
	if f.errs[i] == nil || f.servers[i].watch.wasInterrupted() {
		return
	}
	f.failed.Do(func() {
		f.first = i
		if !f.interruptible {
			f.cancel()
			return
		}
		for k, s := range f.servers {
			if k != i {
				s.watch.interrupt()
			}
		}
	})
}

// runDone runs target i on a goroutine of its own.
func (f *fan) runDone(i int) {
	defer f.wg.Done()
	f.run(i)
}

// errPartFailed is why the other sub-queries of a split statement are stopped: one failed.
var errPartFailed = errors.New("another sub-query of the split statement failed")

// undoTimeout bounds the undo of a failed split write.
const undoTimeout = 5 * time.Second

// splitSavepoint is the savepoint behind which a split write runs inside a transaction: a
// savepoint of the client's of that name (savepoint names ignore case) would be moved and
// released by it, so the client's is refused (see refuseSplitSavepoint).
const splitSavepoint = "obroute_split"

// refuseSplitSavepoint refuses a client's savepoint statement naming splitSavepoint.
func refuseSplitSavepoint(c *routing.Control) error {
	if c == nil || c.Savepoint == 0 || c.Name != splitSavepoint {
		return nil
	}
	return errorf("%w: the savepoint %s is the one obroute sets and releases around each write split across physical tables inside a transaction, which would move or release the client's of that name; name the savepoint otherwise",
		routing.ErrSessionState, splitSavepoint)
}

// execTargets runs the targets of a split write. The router only splits a write across tables
// of one backend; the parts land together or not at all: outside a transaction in a local one,
// inside the client's transaction (or the one it opens, with autocommit off) behind a savepoint. Its error says which parts were written:
// none (a part failed and all were undone, or the connection broke before COMMIT was sent), or,
// when the local transaction's COMMIT got no answer, all or none (ErrCommitUnknown).
func (cs *clientSession) execTargets(ctx context.Context, plan *routing.Plan) (driver.Result, error) {
	backends := plan.Backends()
	if len(backends) > 1 {
		return nil, errorf("%w: a write to backends %s would not be atomic; write to each separately", routing.ErrCrossBackend, strings.Join(backends, ", "))
	}
	s, err := cs.splitServer(ctx, plan, backends[0])
	if err != nil {
		return nil, err
	}
	if err := cs.sync(ctx, s); err != nil {
		return nil, err
	}
	if err := cs.bindTx(ctx, s, plan); err != nil {
		return nil, err
	}
	// With autocommit off the write opens the client session's transaction (execute records
	// it): its parts stay in it, behind a savepoint, for the client's COMMIT or ROLLBACK.
	inTx := cs.tx.active || !plan.OutsideTx && !cs.autocommitFor(plan.Shadow)
	begin, undo, done := "SAVEPOINT "+splitSavepoint, "ROLLBACK TO SAVEPOINT "+splitSavepoint, "RELEASE SAVEPOINT "+splitSavepoint
	if !inTx {
		// Neither chained nor released, whatever completion_type the client session set.
		begin, undo, done = "START TRANSACTION", rollbackImplicitly, commitImplicitly
	}
	w := splitWrite{plan: plan, inTx: inTx}
	// fail ends the attempt: the parts are undone (even when ctx is done: the undo must run), or
	// the transaction is lost with its session.
	fail := func(err error, part int) (driver.Result, error) {
		cs.ranSplit(plan, nil, 0, err)
		if inTx && isDeadlock(err) {
			// The server rolled the whole transaction back, its savepoints with it; the client
			// session's transaction is over, as on one server (execute ends it).
			return nil, w.deadlocked(err, part)
		}
		if !s.broken {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
			_, uerr := s.exec(uctx, undo, nil, false)
			cancel()
			if uerr == nil {
				return nil, w.failed(err, part, "")
			}
			s.broken = true
		}
		if inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		cs.c.stats.serverLost.Add(1) // with the local transaction
		return nil, w.failed(err, part, "; the connection broke before COMMIT, so the server rolled the local transaction back")
	}
	if _, err := s.exec(ctx, begin, nil, false); err != nil {
		if s.broken && inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		return nil, err // nothing to undo
	}
	var total int64
	for i, t := range plan.Targets {
		res, err := s.exec(ctx, t.SQL, t.Args, false)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			total += n
		}
		if err != nil {
			return fail(err, i)
		}
	}
	if _, err := s.exec(ctx, done, nil, false); err != nil {
		if inTx || reachedServer(err) || errors.Is(err, driver.ErrBadConn) || !s.broken {
			// Answered (a COMMIT the server refuses rolls back), or never sent: nothing written.
			return fail(err, -1)
		}
		cs.dropBroken(s)
		cs.c.stats.serverLost.Add(1)
		return nil, errorf("%w (backend %s was at %s): the %s ran as %d parts (%s) in one local transaction, whose COMMIT was sent and got no answer: either every part was written or none; check before running it again: %w",
			ErrCommitUnknown, s.backend.name, s.addr(), plan.Statement.Kind, len(plan.Targets), w.parts(), err)
	}
	cs.ranSplit(plan, nil, total, nil)
	return driver.RowsAffected(total), nil
}

// deadlocked is the error of a split write inside a transaction whose part failed with a
// deadlock, with which the server rolled back the whole transaction.
func (w splitWrite) deadlocked(err error, part int) error {
	what := "its RELEASE SAVEPOINT"
	if part >= 0 {
		what = "part " + strings.Join(w.plan.Targets[part].Tables, ", ")
	}
	return errorf("obroute: the %s ran as %d parts (%s) in the transaction; %s failed with a deadlock, with which the server rolled the whole transaction back, as one server would: no part and nothing else of the transaction was written, and the next statement runs outside it: %w",
		w.plan.Statement.Kind, len(w.plan.Targets), w.parts(), what, err)
}

// isDeadlock reports whether err is InnoDB's deadlock (1213), with which the server rolls back
// the whole transaction (a lock wait timeout, 1205, rolls back the statement only, unless
// innodb_rollback_on_timeout: then the savepoint of a split write is gone and the transaction is
// lost with its server session).
func isDeadlock(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213
}

// splitWrite words the errors of a split write.
type splitWrite struct {
	plan *routing.Plan
	inTx bool
}

// parts names the physical tables of the write's parts.
func (w splitWrite) parts() string {
	var names []string
	for _, t := range w.plan.Targets {
		names = append(names, strings.Join(t.Tables, ", "))
	}
	return strings.Join(names, ", ")
}

// failed is the error of a split write whose part (-1: its COMMIT or RELEASE SAVEPOINT) failed with err
// and whose parts were all undone; why adds how they were.
func (w splitWrite) failed(err error, part int, why string) error {
	what := "its COMMIT"
	if w.inTx {
		what = "its RELEASE SAVEPOINT"
	}
	if part >= 0 {
		what = "part " + strings.Join(w.plan.Targets[part].Tables, ", ")
	}
	scope := "one local transaction"
	undone := "rolled back"
	if w.inTx {
		scope, undone = "the transaction, behind a savepoint", "rolled back to the savepoint (the transaction goes on)"
	}
	return errorf("obroute: the %s ran as %d parts (%s) in %s; %s failed, every part was %s and no part was written%s: %w",
		w.plan.Statement.Kind, len(w.plan.Targets), w.parts(), scope, what, undone, why, err)
}

// splitServer is targetServer for the backend of a split statement's sub-queries, which are not
// retried one by one: a server session go-sql-driver has closed (its rows broke off in the middle
// of a stream) is replaced now, outside a transaction, as runTarget replaces one whose statement
// failed before it was sent.
func (cs *clientSession) splitServer(ctx context.Context, plan *routing.Plan, backend string) (*serverSession, error) {
	s, err := cs.targetServer(ctx, plan, backend)
	if err != nil || s.valid() || s.inTx || cs.tx.active && cs.tx.backend == backend {
		return s, err
	}
	s.broken = true
	cs.dropBroken(s)
	cs.replaced(ctx, s.backend, "connection closed")
	return cs.targetServer(ctx, plan, backend)
}
