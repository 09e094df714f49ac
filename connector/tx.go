package connector

import (
	"context"
	"database/sql/driver"
)

// tx is the driver.Tx of BeginTx; the work is the client session's.
type tx struct{ cs *clientSession }

var _ driver.Tx = (*tx)(nil)

// Commit implements driver.Tx.
func (t *tx) Commit() error { return t.cs.finishTx(context.Background(), false, "COMMIT") }

// Rollback implements driver.Tx.
func (t *tx) Rollback() error { return t.cs.finishTx(context.Background(), true, "ROLLBACK") }
