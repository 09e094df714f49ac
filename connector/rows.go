package connector

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"
	"slices"

	"github.com/obroute/obroute/internal/merge"
)

// rows wraps a backend's rows: it delegates every optional interface of database/sql/driver,
// answering with database/sql's own defaults where the wrapped rows have none, and runs onClose
// (statement close, server session release) after the wrapped rows are closed.
type rows struct {
	driver.Rows
	onClose func() error
	closed  bool
	// server, ctx and stmt are set for rows read from one server session: after the wrapped
	// rows, stmt (when the rows are a prepared statement's) is closed and server is told
	// (afterRows). Kept as fields, not a closure: one allocation per statement instead of two.
	server *serverSession
	ctx    context.Context
	stmt   driver.Stmt
	// names replace the wrapped rows' column names by index (a catalog answer's items as the
	// client wrote them); nil for none.
	names map[int]string
}

// Columns implements driver.Rows.
func (r *rows) Columns() []string {
	cols := r.Rows.Columns()
	if r.names == nil {
		return cols
	}
	cols = slices.Clone(cols)
	for i, n := range r.names {
		if i < len(cols) {
			cols[i] = n
		}
	}
	return cols
}

var _ merge.Rows = (*rows)(nil)

func wrapRows(r driver.Rows, onClose func() error) *rows {
	return &rows{Rows: r, onClose: onClose}
}

// Close implements driver.Rows.
func (r *rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	if r.server != nil {
		r.server.afterRows(r.ctx)
	}
	if r.stmt != nil {
		if cerr := r.stmt.Close(); err == nil {
			err = cerr
		}
	}
	if r.onClose != nil {
		if cerr := r.onClose(); err == nil {
			err = cerr
		}
	}
	return err
}

// HasNextResultSet implements driver.RowsNextResultSet.
func (r *rows) HasNextResultSet() bool {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.HasNextResultSet()
	}
	return false
}

// NextResultSet implements driver.RowsNextResultSet.
func (r *rows) NextResultSet() error {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.NextResultSet()
	}
	return io.EOF
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if c, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return c.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return c.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *rows) ColumnTypeNullable(i int) (bool, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return c.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return c.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

var anyType = reflect.TypeFor[any]()

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if c, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return c.ColumnTypeScanType(i)
	}
	return anyType
}
