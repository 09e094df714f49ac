package metadata

import "errors"

// Errors returned by this package. They are wrapped with the details of the
// failure (table name, column, value); test for them with errors.Is.
var (
	// ErrInvalidTable reports a metadata row that cannot describe a physical
	// table: an empty name or one that is not a plain identifier, a missing
	// or unparsable min_time/max_time, or a min_time later than max_time. Fix
	// the row in the metadata table.
	ErrInvalidTable = errors.New("metadata: invalid shard table")

	// ErrDuplicateTable reports two metadata rows with the same table name.
	ErrDuplicateTable = errors.New("metadata: duplicate shard table")

	// ErrInvalidIdentifier reports a metadata table name that is not a plain
	// MySQL identifier (letters, digits, '_' or '$', at most 64 characters,
	// optionally qualified as schema.table).
	ErrInvalidIdentifier = errors.New("metadata: invalid table identifier")

	// ErrSchema reports a metadata table that lacks one of the required
	// columns table_name, min_time, max_time, is_hot.
	ErrSchema = errors.New("metadata: metadata table has the wrong columns")

	// ErrInvalidHotWindow reports a HotWindow that does not set exactly one
	// of Days and Months to a positive value.
	ErrInvalidHotWindow = errors.New("metadata: invalid hot window")
)
