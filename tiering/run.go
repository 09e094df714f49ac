package tiering

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/go-sql-driver/mysql"
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
	defer lock.Close()
	if err := s.createState(ctx); err != nil {
		return nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	p, st, err := s.planMove(ctx, table, &opts)
	if err != nil {
		return nil, err
	}
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
	var err error
	switch m.st.step {
	case StepGuard:
		err = m.guard(ctx)
	case StepCreate:
		err = m.create(ctx)
	case StepCopy:
		err = m.copy(ctx)
	case StepCheck:
		err = m.check(ctx)
	case StepFlip:
		return m.flip(ctx) // records its step itself, with the metadata
	case StepWait:
		err = m.wait(ctx)
	case StepFence:
		err = m.fence(ctx)
	case StepDelete:
		err = m.delete(ctx)
	case StepDrop:
		err = m.drop(ctx)
	}
	if err != nil {
		return err
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

// lockMove takes the named lock of the table's move on the metadata backend, on a connection
// of its own: the server releases it when the connection ends, even when the process dies.
func (s *Store) lockMove(ctx context.Context, table string) (*sql.Conn, error) {
	conn, err := s.meta.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	name, err := s.lockName(ctx, conn, table)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("tiering: move %s: take the move's lock: %w", table, err)
	}
	if got.Int64 != 1 {
		conn.Close()
		return nil, fmt.Errorf("%w: %s (lock %s on %s is held); wait for it to end", ErrMoveInProgress, table, name, s.meta.Name)
	}
	return conn, nil
}

// holdsLock fails when the lock's connection was lost: another process may have taken over.
func (m *mover) holdsLock(ctx context.Context) error {
	name, err := m.s.lockName(ctx, m.lock, m.st.table)
	var mine sql.NullInt64
	if err == nil {
		err = m.lock.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", name).Scan(&mine)
	}
	if err != nil || mine.Int64 != 1 {
		return fmt.Errorf("%w: lost the move's lock on %s (%v)", ErrMoveInProgress, m.s.meta.Name, err)
	}
	return nil
}

// lockName is the name of the lock of a table's move: named locks are server-wide, so it
// names the database of the shard metadata too, within the 64 characters MySQL allows.
func (s *Store) lockName(ctx context.Context, conn *sql.Conn, table string) (string, error) {
	var db sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		return "", err
	}
	name := "obroute_migrate." + db.String + "." + table
	if len(name) > 64 {
		name = fmt.Sprintf("obroute_migrate.%08x", crc32.ChecksumIEEE([]byte(db.String+"."+table)))
	}
	return name, nil
}

// guard creates the triggers that make the source table read-only. CREATE TRIGGER waits for
// the transactions writing to the table, so none is left uncommitted when it returns.
func (m *mover) guard(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("make %s on %s read-only", m.st.table, m.source.Name)})
	msg := fmt.Sprintf("%s is read-only: obroute migrate is moving it to %s", m.st.table, m.target.Name)
	if len(msg) > 128 {
		msg = msg[:128]
	}
	for _, event := range []string{"INSERT", "UPDATE", "DELETE"} {
		name := guardTrigger(m.st.table, event)
		var n int
		if err := m.source.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = ?", name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		q := fmt.Sprintf("CREATE TRIGGER %s BEFORE %s ON %s FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '%s'",
			quoteIdent(name), event, quoteIdent(m.st.table), msg)
		if err := m.ddl(ctx, m.source, q); err != nil {
			return fmt.Errorf("create trigger %s on %s (the move needs the TRIGGER privilege): %w", name, m.source.Name, err)
		}
	}
	m.event(MoveEvent{Finished: true})
	return nil
}

// create creates the table on the target and counts the source's rows.
func (m *mover) create(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("create %s on %s", m.st.table, m.target.Name)})
	exists, err := tableExists(ctx, m.target.DB, m.st.table)
	if err != nil {
		return err
	}
	if exists {
		sh, err := readShape(ctx, m.target, m.st.table)
		if err != nil {
			return err
		}
		if !sameNames(sh.columns, m.shape.columns) || !sameNames(sh.key, m.shape.key) {
			return fmt.Errorf("%w: %s already exists on %s with other columns or primary key; drop or rename it", ErrNotMovable, m.st.table, m.target.Name)
		}
		n, err := countRows(ctx, m.target.DB, m.st.table, "1 = 1")
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %s already exists on %s with %d rows, which a move would overwrite; drop or rename it", ErrNotMovable, m.st.table, m.target.Name, n)
		}
	} else if err := createLike(ctx, m.source, m.st.table, m.target, m.st.table, true); err != nil {
		return err
	}
	if m.st.rowsTotal, err = countRows(ctx, m.source.DB, m.st.table, "1 = 1"); err != nil {
		return err
	}
	m.event(MoveEvent{Finished: true})
	return nil
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if indexOf(b[i:i+1], a[i]) < 0 {
			return false
		}
	}
	return true
}

// copy copies the rows after the last chunk recorded, chunk by chunk.
func (m *mover) copy(ctx context.Context) error {
	c, err := newCopier(m.source, m.target, m.st.table, m.shape, m.opts.ChunkRows)
	if err != nil {
		return err
	}
	defer c.close()
	m.event(MoveEvent{Text: fmt.Sprintf("copy %s from %s to %s", m.st.table, m.source.Name, m.target.Name), Done: m.st.rowsCopied, Total: m.st.rowsTotal, Unit: "rows"})
	pace := newPacer(m.opts.RowsPerSecond)
	var saved time.Time
	for {
		hi, sm, err := c.copyChunk(ctx, m.st.lastKey)
		if err != nil {
			return err
		}
		if hi == nil {
			break
		}
		m.st.rowsCopied += sm.rows
		m.st.checksum ^= sm.checksum
		m.st.lastKey = hi
		// The progress is recorded about once a second, not per chunk (each record is a
		// commit on the metadata backend): a resumed copy redoes the chunks after the last
		// record, which leave the same rows.
		if time.Since(saved) >= saveEvery {
			if err := m.s.saveState(ctx, m.s.meta.DB, m.st); err != nil {
				return err
			}
			saved = time.Now()
		}
		m.event(MoveEvent{Done: m.st.rowsCopied, Total: m.st.rowsTotal, Unit: "rows"})
		if err := pace.wait(ctx, sm.rows); err != nil {
			return err
		}
	}
	// Rows after the last key on the target came from nowhere: remove them.
	where, args := "1 = 1", []any(nil)
	if m.st.lastKey != nil {
		where, args = afterKey(m.shape.key), keyArgs(m.st.lastKey)
	}
	if _, err := m.target.DB.ExecContext(ctx, "DELETE FROM "+quoteIdent(m.st.table)+" WHERE "+where, args...); err != nil {
		return err
	}
	m.event(MoveEvent{Done: m.st.rowsCopied, Total: m.st.rowsTotal, Unit: "rows", Finished: true})
	return nil
}

// check compares the whole copy with the sum of the chunks copied from the source.
func (m *mover) check(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("compare the copy on %s with the rows copied", m.target.Name)})
	got, err := checksum(ctx, m.target.DB, m.st.table, m.shape.columns, "1 = 1", nil)
	if err != nil {
		return err
	}
	want := sum{rows: m.st.rowsCopied, checksum: m.st.checksum}
	if got != want || want.rows != m.st.rowsTotal {
		return fmt.Errorf("%w: %s on %s has %d rows (checksum %d); %d were copied (checksum %d) of the %d counted on %s; nothing was switched: the shard metadata still places it on %s. Abort the move (obroute migrate -abort %s) and look for what writes to the tables",
			ErrChecksum, m.st.table, m.target.Name, got.rows, got.checksum, want.rows, want.checksum, m.st.rowsTotal, m.source.Name, m.source.Name, m.st.table)
	}
	m.event(MoveEvent{Finished: true})
	return nil
}

// flip places the table on the target in the shard metadata and records the step in the same
// transaction.
func (m *mover) flip(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("switch %s to %s in %s", m.st.table, m.target.Name, m.s.metaTable)})
	withLocation, err := m.s.hasLocation(ctx)
	if err != nil {
		return err
	}
	if err := m.holdsLock(ctx); err != nil {
		return err
	}
	tx, err := m.s.meta.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	meta := quoteQualified(m.s.metaTable)
	q, args := "UPDATE "+meta+" SET is_hot = 0 WHERE table_name = ?", []any{m.st.table}
	if withLocation {
		q, args = "UPDATE "+meta+" SET is_hot = 0, location = ? WHERE table_name = ?", []any{m.target.Name, m.st.table}
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return err
	}
	m.st.step = StepWait
	if err := m.s.saveState(ctx, tx, m.st); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+quoteQualified(m.s.stateName)+" SET flipped_at = NOW(6) WHERE table_name = ?", m.st.table); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		m.st.step = StepFlip
		return err
	}
	m.st.step = StepFlip // the event belongs to the flip
	m.event(MoveEvent{Finished: true})
	m.st.step = StepWait
	return nil
}

// wait lets Settle pass since the flip, by the metadata server's clock (the flip's time is
// recorded there, so a resumed move on another machine waits the rest only).
func (m *mover) wait(ctx context.Context) error {
	total := m.opts.Settle
	first := true
	for {
		var us sql.NullInt64
		err := m.s.meta.DB.QueryRowContext(ctx, "SELECT TIMESTAMPDIFF(MICROSECOND, flipped_at, NOW(6)) FROM "+quoteQualified(m.s.stateName)+" WHERE table_name = ?", m.st.table).Scan(&us)
		if err != nil {
			return err
		}
		elapsed := time.Duration(us.Int64) * time.Microsecond
		e := MoveEvent{Done: int64(min(elapsed, total) / time.Second), Total: int64(total / time.Second), Unit: "s", Finished: elapsed >= total}
		if first {
			e.Text = fmt.Sprintf("wait %s for every obroute process to route %s to %s", total, m.st.table, m.target.Name)
			first = false
		}
		m.event(e)
		if elapsed >= total {
			return nil
		}
		t := time.NewTimer(min(total-elapsed, time.Second))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// fence renames the source table out of reach, drops its triggers and checks it unchanged.
func (m *mover) fence(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("rename %s on %s to %s", m.st.table, m.source.Name, m.st.fence)})
	there, err := tableExists(ctx, m.source.DB, m.st.table)
	if err != nil {
		return err
	}
	if there {
		if err := m.ddl(ctx, m.source, "RENAME TABLE "+quoteIdent(m.st.table)+" TO "+quoteIdent(m.st.fence)); err != nil {
			return err
		}
	} else if ok, err := tableExists(ctx, m.source.DB, m.st.fence); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("neither %s nor %s is on %s: the source table was removed by someone else; the copy on %s is complete, finish by hand (set step = 'done' in %s)",
			m.st.table, m.st.fence, m.source.Name, m.target.Name, m.s.stateName)
	}
	for _, event := range []string{"INSERT", "UPDATE", "DELETE"} {
		if _, err := m.source.DB.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+quoteIdent(guardTrigger(m.st.table, event))); err != nil {
			return err
		}
	}
	got, err := checksum(ctx, m.source.DB, m.st.fence, m.shape.columns, "1 = 1", nil)
	if err != nil {
		return err
	}
	if want := (sum{rows: m.st.rowsCopied, checksum: m.st.checksum}); got != want {
		return fmt.Errorf("%w: %s (formerly %s) on %s has %d rows (checksum %d) but %d were copied (checksum %d): it changed after the copy; nothing is deleted. Compare it with %s on %s by hand",
			ErrChecksum, m.st.fence, m.st.table, m.source.Name, got.rows, got.checksum, want.rows, want.checksum, m.st.table, m.target.Name)
	}
	m.event(MoveEvent{Finished: true})
	return nil
}

// ddl runs a statement that needs the table's metadata lock exclusively (CREATE TRIGGER,
// RENAME TABLE) on a session that gives up waiting for it after two seconds, retrying until
// the long statements holding the lock end: statements on the table queue behind a waiting
// DDL, so a long wait would stall the table's readers.
func (m *mover) ddl(ctx context.Context, b *Backend, q string) error {
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 2"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = DEFAULT") // back to the pool as it was
	for {
		_, err := conn.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1205 { // lock wait timeout
			return err
		}
		m.event(MoveEvent{Text: fmt.Sprintf("%s is in use by a long statement on %s; retrying", m.st.table, b.Name)})
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// delete deletes the fenced table's rows in chunks.
func (m *mover) delete(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("delete the rows of %s on %s", m.st.fence, m.source.Name), Done: m.st.rowsDeleted, Total: m.st.rowsCopied, Unit: "rows"})
	if ok, err := tableExists(ctx, m.source.DB, m.st.fence); err != nil || !ok {
		return err
	}
	pace := newPacer(m.opts.RowsPerSecond)
	var lo []any
	var saved time.Time
	for {
		hi, gone, last, err := deleteChunk(ctx, m.source, m.st.fence, m.shape.key, lo, m.opts.ChunkRows)
		if err != nil {
			return err
		}
		m.st.rowsDeleted += gone
		if time.Since(saved) >= saveEvery { // a count for the operator: the delete needs no position
			if err := m.s.saveState(ctx, m.s.meta.DB, m.st); err != nil {
				return err
			}
			saved = time.Now()
		}
		m.event(MoveEvent{Done: m.st.rowsDeleted, Total: m.st.rowsCopied, Unit: "rows", Finished: last})
		if last {
			return nil
		}
		lo = hi
		if err := pace.wait(ctx, gone); err != nil {
			return err
		}
	}
}

// drop drops the emptied fenced table.
func (m *mover) drop(ctx context.Context) error {
	m.event(MoveEvent{Text: fmt.Sprintf("drop %s on %s", m.st.fence, m.source.Name)})
	if _, err := m.source.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteIdent(m.st.fence)); err != nil {
		return err
	}
	m.event(MoveEvent{Finished: true})
	return nil
}

// AbortMove undoes a move that has not switched the shard metadata yet: it drops the copy on
// the target and the triggers on the source, and forgets the move. After the switch a move
// can only be finished (run Move again).
func (s *Store) AbortMove(ctx context.Context, table string) error {
	lock, err := s.lockMove(ctx, table)
	if err != nil {
		return err
	}
	defer lock.Close()
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
