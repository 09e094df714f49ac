package tiering

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/obroute/obroute/metadata"
)

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

// unlockMove releases the lock of the table's move and closes its connection: closing a
// *sql.Conn alone returns the connection to the pool, which would keep the lock.
func (s *Store) unlockMove(conn *sql.Conn, table string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if name, err := s.lockName(ctx, conn, table); err == nil {
		conn.ExecContext(ctx, "DO RELEASE_LOCK(?)", name)
	}
	conn.Close()
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

// lockName is the name of the lock of a table's move (metadata.MoveLockName).
func (s *Store) lockName(ctx context.Context, conn *sql.Conn, table string) (string, error) {
	var db sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		return "", err
	}
	return metadata.MoveLockName(db.String, table), nil
}

// lockDDL takes the DDL lock of the time-sharded table logical (metadata.DDLLockName) on a
// connection of its own, waiting while DDL on it runs through obroute; release releases it.
func (s *Store) lockDDL(ctx context.Context, logical string) (release func(), err error) {
	conn, err := s.meta.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var db sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		conn.Close()
		return nil, err
	}
	name := metadata.DDLLockName(db.String, logical)
	for {
		var got sql.NullInt64
		err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 1)", name).Scan(&got)
		if err == nil && got.Int64 == 1 {
			return func() {
				// Closing a *sql.Conn returns its connection to the pool, which keeps the lock.
				conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK(?)", name)
				conn.Close()
			}, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			conn.Close()
			return nil, fmt.Errorf("waiting for DDL on %s to end (lock %s on %s): %w", logical, name, s.meta.Name, cerr)
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("take the lock %s: %w", name, err)
		}
	}
}
