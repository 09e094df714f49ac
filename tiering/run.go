package tiering

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Move moves a physical table from the backend holding it (by the shard metadata) to another
// (the first backend of role cold unless opts.To), so that no statement routed by obroute sees
// a row of it twice or not at all at any moment, across every obroute process:
//
//  1. guard: triggers make the table read-only on the source; only a table that left the hot
//     window is moved, so the application has no reason to write to it, and whoever tries is
//     refused with a message naming the move.
//  2. create: the table is created on the target with the source's schema.
//  3. copy: the rows are copied in primary-key chunks under a rate limit, each chunk replacing
//     the target's rows of its key range in one transaction (a chunk copied again after a crash
//     leaves the same rows), then verified: row count and BIT_XOR of a CRC32 of every column,
//     computed by both servers. The shard metadata still places the table on the source, which
//     holds every row: the partial copy is read by no one.
//  4. check: the whole copy is compared with the sum of the chunks copied.
//  5. flip: the shard metadata places the table on the target, in the transaction that
//     records the step. A process that has not refreshed reads the whole table on the source,
//     one that has reads the whole copy on the target; both hold every row, once.
//  6. wait: Settle (by the metadata server's clock), for every process to refresh and finish
//     the statements it routed by the old metadata.
//  7. fence: the source table is renamed, so a process still routing by the old metadata (its
//     refresh failing) gets an error, never a wrong answer; it is checked unchanged since the
//     copy, and its triggers dropped.
//  8. delete: its rows are deleted in primary-key chunks under the rate limit.
//  9. drop: the emptied table is dropped.
//
// Every step is recorded in the state table (shard_migration, beside the shard metadata);
// Move called again after a crash, a kill or an error resumes at the step it stopped in.
// A second Move of the same table at the same time is refused (ErrMoveInProgress, by a named
// lock on the metadata backend). A moved table's Move returns its plan at once.
func (s *Store) Move(ctx context.Context, table string, opts MoveOptions) (*MovePlan, error) {
	opts.defaults(s)
	lock, err := s.lockMove(ctx, table)
	if err != nil {
		return nil, err
	}
	defer s.unlockMove(lock, table)
	if err := s.createState(ctx); err != nil {
		return nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	p, st, err := s.planMove(ctx, table, &opts)
	if err != nil {
		return nil, err
	}
	// DDL on the logical table run through obroute meanwhile would change the source after its
	// definition is copied: wait for one that runs; one that starts now sees the move's lock and
	// is refused.
	release, err := s.lockDDL(ctx, p.Logical)
	if err != nil {
		return nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	release()
	if st == nil {
		st = &moveState{table: table, source: p.Source, target: p.Target, step: StepGuard, fence: p.Fence}
		if err := s.insertState(ctx, st); err != nil {
			return nil, fmt.Errorf("tiering: %w", err)
		}
	}
	m := &mover{s: s, st: st, plan: p, opts: &opts, lock: lock,
		source: s.Backend(st.source), target: s.Backend(st.target),
		shape: tableShape{columns: p.Columns, key: p.Key}}
	for m.st.step != StepDone {
		step := m.st.step
		if err := m.run(ctx); err != nil {
			return p, fmt.Errorf("tiering: move %s, step %s: %w (run the move again to resume)", table, step, err)
		}
	}
	p.Resume, p.Copied, p.Deleted, p.Rows, p.Exact = StepDone, st.rowsCopied, st.rowsDeleted, st.rowsTotal, true
	return p, nil
}

// saveEvery is how often the copy and the delete record their progress.
const saveEvery = time.Second

// mover runs the steps of one move.
type mover struct {
	s              *Store
	st             *moveState
	plan           *MovePlan
	opts           *MoveOptions
	lock           *sql.Conn
	source, target *Backend
	shape          tableShape
}

// run runs the current step and records the next one.
func (m *mover) run(ctx context.Context) error {
	if m.st.step == StepFlip {
		return m.flip(ctx) // records its step itself, with the metadata
	}
	actions := map[Step]func(context.Context) error{
		StepGuard: m.guard, StepCreate: m.create, StepCopy: m.copy, StepCheck: m.check,
		StepWait: m.wait, StepFence: m.fence, StepDelete: m.delete, StepDrop: m.drop,
	}
	if act := actions[m.st.step]; act != nil {
		if err := act(ctx); err != nil {
			return err
		}
	}
	if err := m.holdsLock(ctx); err != nil {
		return err
	}
	m.st.step = steps[m.st.step.index()+1]
	return m.s.saveState(ctx, m.s.meta.DB, m.st)
}

// event reports progress to the observer.
func (m *mover) event(e MoveEvent) {
	e.Table, e.Step = m.st.table, m.st.step
	m.opts.Observer(e)
}

// AbortMove undoes a move that has not switched the shard metadata yet: it drops the copy on
// the target and the triggers on the source, and forgets the move. After the switch a move
// can only be finished (run Move again).
func (s *Store) AbortMove(ctx context.Context, table string) error {
	lock, err := s.lockMove(ctx, table)
	if err != nil {
		return err
	}
	defer s.unlockMove(lock, table)
	st, err := s.loadState(ctx, table)
	if err != nil {
		return fmt.Errorf("tiering: abort the move of %s: %w", table, err)
	}
	if st == nil {
		return fmt.Errorf("%w: no move of %s is recorded in %s", ErrNotMovable, table, s.stateName)
	}
	if st.step.index() >= StepWait.index() {
		return fmt.Errorf("%w: the move of %s switched the shard metadata to %s already (step %s); run it again to finish it", ErrNotMovable, table, st.target, st.step)
	}
	source, target := s.Backend(st.source), s.Backend(st.target)
	if source == nil || target == nil {
		return fmt.Errorf("%w: the move of %s goes from %s to %s, which are not both configured", ErrNotMovable, table, st.source, st.target)
	}
	// From the copy on, the target's table is the move's; in the create step only when empty
	// (the step refuses a table with rows, which is someone else's).
	drop := st.step.index() > StepCreate.index()
	if st.step == StepCreate {
		n, err := countRows(ctx, target.DB, table, "1 = 1")
		drop = err == nil && n == 0
	}
	if drop {
		if _, err := target.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteIdent(table)); err != nil {
			return fmt.Errorf("tiering: abort the move of %s: drop the copy on %s: %w", table, target.Name, err)
		}
	}
	for _, event := range []string{"INSERT", "UPDATE", "DELETE"} {
		if _, err := source.DB.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+quoteIdent(guardTrigger(table, event))); err != nil {
			return fmt.Errorf("tiering: abort the move of %s: %w", table, err)
		}
	}
	if err := s.deleteState(ctx, table); err != nil {
		return fmt.Errorf("tiering: abort the move of %s: %w", table, err)
	}
	return nil
}
