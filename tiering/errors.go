package tiering

import "errors"

// Errors of the operations; they are wrapped with the details (table, backend, values) and
// what to do. Test for them with errors.Is.
var (
	// ErrNotMovable refuses a move the store does not allow: a table still in the hot window,
	// without a primary key, not where the metadata places it, already on the target, or a
	// state that does not match the request.
	ErrNotMovable = errors.New("tiering: table cannot be moved")

	// ErrChecksum stops a move whose copy differs from the source: nothing was switched, the
	// source keeps every row.
	ErrChecksum = errors.New("tiering: copy differs from the source")

	// ErrMoveInProgress refuses a second move of a table that another process is moving.
	ErrMoveInProgress = errors.New("tiering: the table is being moved by another process")
)
