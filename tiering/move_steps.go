package tiering

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

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
