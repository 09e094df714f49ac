package tiering

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Step is one step of a move, in order.
type Step string

// The steps of a move. A move records the step it is in; a rerun resumes there.
const (
	StepGuard  Step = "guard"  // make the table read-only on the source
	StepCreate Step = "create" // create it on the target with the same schema
	StepCopy   Step = "copy"   // copy in primary-key chunks, each verified
	StepCheck  Step = "check"  // compare the whole copy with the rows copied
	StepFlip   Step = "flip"   // point the shard metadata at the target
	StepWait   Step = "wait"   // let every obroute process route by the new metadata
	StepFence  Step = "fence"  // rename the source table out of reach, check it is unchanged
	StepDelete Step = "delete" // delete its rows in chunks
	StepDrop   Step = "drop"   // drop the emptied table
	StepDone   Step = "done"   // moved
)

// steps lists the steps in order.
var steps = []Step{StepGuard, StepCreate, StepCopy, StepCheck, StepFlip, StepWait, StepFence, StepDelete, StepDrop, StepDone}

// index returns the position of the step; -1 for an unknown one.
func (s Step) index() int {
	for i, x := range steps {
		if x == s {
			return i
		}
	}
	return -1
}

// flipped reports whether the shard metadata already points at the target in this step.
func (s Step) flipped() bool { return s.index() > StepFlip.index() }

// stateSQL creates the state table; %s is its quoted name.
const stateSQL = `CREATE TABLE IF NOT EXISTS %s (
  table_name VARCHAR(64) NOT NULL PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  target VARCHAR(64) NOT NULL,
  step VARCHAR(16) NOT NULL,
  rows_total BIGINT NOT NULL DEFAULT 0,
  rows_copied BIGINT NOT NULL DEFAULT 0,
  rows_deleted BIGINT NOT NULL DEFAULT 0,
  checksum BIGINT UNSIGNED NOT NULL DEFAULT 0,
  last_key TEXT NULL,
  fence VARCHAR(64) NULL,
  flipped_at DATETIME(6) NULL,
  started_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  finished_at DATETIME(6) NULL
)`

// moveState is one row of the state table: where a move stands.
type moveState struct {
	table, source, target string
	step                  Step
	rowsTotal, rowsCopied int64
	rowsDeleted           int64
	checksum              uint64 // BIT_XOR of the checksums of the rows copied
	lastKey               []any  // primary key of the last row copied; nil before the first
	fence                 string
}

// finishedElsewhere reports a finished move of a table the shard metadata now places on
// another backend than its target (at): it was put back by hand, and a move starts afresh.
func (st *moveState) finishedElsewhere(at *Backend) bool {
	return st != nil && st.step == StepDone && (at == nil || at.Name != st.target)
}

// createState creates the state table if it does not exist.
func (s *Store) createState(ctx context.Context) error {
	if _, err := s.meta.DB.ExecContext(ctx, fmt.Sprintf(stateSQL, quoteQualified(s.stateName))); err != nil {
		return fmt.Errorf("create the migration state table %s on %s: %w", s.stateName, s.meta.Name, err)
	}
	return nil
}

// loadState returns the state of the table's move; nil when there is none (or no state table).
func (s *Store) loadState(ctx context.Context, table string) (*moveState, error) {
	st := &moveState{table: table}
	var step string
	var lastKey, fence sql.NullString
	var checksum string
	err := s.meta.DB.QueryRowContext(ctx, "SELECT source, target, step, rows_total, rows_copied, rows_deleted, CAST(checksum AS CHAR), last_key, fence FROM "+
		quoteQualified(s.stateName)+" WHERE table_name = ?", table).
		Scan(&st.source, &st.target, &step, &st.rowsTotal, &st.rowsCopied, &st.rowsDeleted, &checksum, &lastKey, &fence)
	switch {
	case errors.Is(err, sql.ErrNoRows) || tableMissing(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the migration state of %s: %w", table, err)
	}
	st.step, st.fence = Step(step), fence.String
	if st.step.index() < 0 {
		return nil, fmt.Errorf("the migration state of %s has the unknown step %q", table, step)
	}
	if st.checksum, err = strconv.ParseUint(checksum, 10, 64); err != nil {
		return nil, fmt.Errorf("the migration state of %s has the checksum %q: %w", table, checksum, err)
	}
	if lastKey.Valid {
		var raw [][]byte
		if err := json.Unmarshal([]byte(lastKey.String), &raw); err != nil {
			return nil, fmt.Errorf("the migration state of %s has the key %q: %w", table, lastKey.String, err)
		}
		for _, v := range raw {
			st.lastKey = append(st.lastKey, v)
		}
	}
	return st, nil
}

// insertState records a new move.
func (s *Store) insertState(ctx context.Context, st *moveState) error {
	// REPLACE: a finished move of the same table is forgotten when it is moved again.
	_, err := s.meta.DB.ExecContext(ctx, "REPLACE INTO "+quoteQualified(s.stateName)+
		" (table_name, source, target, step, fence, started_at, updated_at) VALUES (?, ?, ?, ?, ?, NOW(6), NOW(6))",
		st.table, st.source, st.target, string(st.step), st.fence)
	if err != nil {
		return fmt.Errorf("record the move of %s: %w", st.table, err)
	}
	return nil
}

// execer is a *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// saveState writes the state's progress and step.
func (s *Store) saveState(ctx context.Context, db execer, st *moveState) error {
	var lastKey any
	if st.lastKey != nil {
		raw := make([][]byte, len(st.lastKey))
		for i, v := range st.lastKey {
			raw[i] = keyBytes(v)
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return err
		}
		lastKey = string(b)
	}
	finished := ""
	if st.step == StepDone {
		finished = ", finished_at = NOW(6)"
	}
	_, err := db.ExecContext(ctx, "UPDATE "+quoteQualified(s.stateName)+
		" SET step = ?, rows_total = ?, rows_copied = ?, rows_deleted = ?, checksum = ?, last_key = ?, updated_at = NOW(6)"+finished+" WHERE table_name = ?",
		string(st.step), st.rowsTotal, st.rowsCopied, st.rowsDeleted, strconv.FormatUint(st.checksum, 10), lastKey, st.table)
	if err != nil {
		return fmt.Errorf("record the progress of the move of %s: %w", st.table, err)
	}
	return nil
}

// deleteState forgets a move (after it was aborted).
func (s *Store) deleteState(ctx context.Context, table string) error {
	_, err := s.meta.DB.ExecContext(ctx, "DELETE FROM "+quoteQualified(s.stateName)+" WHERE table_name = ?", table)
	return err
}

// keyBytes is the text of a primary-key value as the server reads it back in a comparison:
// bytes as they are, anything else as fmt prints it (numbers in decimal, floats shortest).
func keyBytes(v any) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	return fmt.Append(nil, v)
}
