package tiering

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
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
