package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/obroute/obroute/merge"
	"github.com/obroute/obroute/routing"
)

// queryTargets runs the targets of a split query concurrently, one per backend, and merges
// their rows. The first error cancels the others.
func (cs *clientSession) queryTargets(ctx context.Context, plan *routing.Plan) (driver.Rows, error) {
	servers := make([]*serverSession, len(plan.Targets))
	for i, t := range plan.Targets {
		s, err := cs.server(ctx, t.Backend)
		if err != nil {
			return nil, err
		}
		for _, other := range servers[:i] {
			if other == s {
				return nil, fmt.Errorf("obroute: internal error: plan sends two row streams to backend %s", t.Backend)
			}
		}
		if err := cs.sync(ctx, s); err != nil {
			return nil, err
		}
		servers[i] = s
	}
	qctx, cancel := context.WithCancel(ctx)
	results := make([]driver.Rows, len(plan.Targets))
	errs := make([]error, len(plan.Targets))
	var wg sync.WaitGroup
	for i := range plan.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := plan.Targets[i]
			results[i], errs[i] = servers[i].query(qctx, t.SQL, t.Args, false)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, r := range results {
			if r != nil {
				r.Close()
			}
			cs.dropBroken(servers[i])
		}
		cancel()
		return nil, firstError(errs)
	}
	spec := merge.Spec{Limit: -1}
	if plan.Merge != nil {
		spec = *plan.Merge
	}
	merged, err := merge.New(spec, results)
	if err != nil {
		cancel()
		return nil, err
	}
	return wrapRows(merged, func() error { cancel(); return nil }), nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// undoTimeout bounds the undo of a failed split write.
const undoTimeout = 5 * time.Second

// execTargets runs the targets of a split write. The router only splits a write across tables
// of one backend; the parts land together or not at all: outside a transaction in a local one,
// inside the client's transaction behind a savepoint.
func (cs *clientSession) execTargets(ctx context.Context, plan *routing.Plan) (driver.Result, error) {
	backends := plan.Backends()
	if len(backends) > 1 {
		return nil, fmt.Errorf("%w: a write to backends %s would not be atomic; write to each separately", routing.ErrCrossBackend, strings.Join(backends, ", "))
	}
	s, err := cs.server(ctx, backends[0])
	if err != nil {
		return nil, err
	}
	if err := cs.sync(ctx, s); err != nil {
		return nil, err
	}
	if cs.tx.active && cs.tx.explicit && s.tx == nil {
		if err := cs.startTx(ctx, s, plan.Shadow); err != nil {
			return nil, err
		}
	}
	inTx := cs.tx.active
	begin, undo, done := "SAVEPOINT obroute_split", "ROLLBACK TO SAVEPOINT obroute_split", "RELEASE SAVEPOINT obroute_split"
	if !inTx {
		begin, undo, done = "START TRANSACTION", "ROLLBACK", "COMMIT"
	}
	// fail ends the attempt: the parts are undone (even when ctx is done: the undo must run), or
	// the transaction is lost with its session.
	fail := func(err error) (driver.Result, error) {
		if !s.broken {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
			_, uerr := s.exec(uctx, undo, nil, false)
			cancel()
			if uerr == nil {
				return nil, err
			}
			s.broken = true
		}
		if inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		return nil, err
	}
	if _, err := s.exec(ctx, begin, nil, false); err != nil {
		if s.broken && inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		return nil, err // nothing to undo
	}
	var total int64
	for _, t := range plan.Targets {
		res, err := s.exec(ctx, t.SQL, t.Args, false)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			total += n
		}
		if err != nil {
			return fail(err)
		}
	}
	if _, err := s.exec(ctx, done, nil, false); err != nil {
		return fail(err)
	}
	return driver.RowsAffected(total), nil
}
