// Package metadata keeps the shard metadata of obroute's hot/cold time
// routing: for every physical table of a time-sharded logical table
// (orders_202501, orders_202502, …) the real span of shard-key times it
// holds, whether it is in the hot window, and which backend holds it.
//
// # Place in obroute
//
// The metadata lives in a small table (DefaultTable, created by CreateTable):
//
//	CREATE TABLE shard_metadata (
//	  table_name VARCHAR(64) PRIMARY KEY,
//	  min_time DATETIME NOT NULL,
//	  max_time DATETIME NOT NULL,
//	  is_hot TINYINT NOT NULL DEFAULT 0,
//	  location VARCHAR(64) NULL,
//	  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
//	);
//
// The location column is obroute's addition and optional: a table without it
// (table_name, min_time, max_time, is_hot, updated_at only) is read as if
// every location were NULL.
//
//   - The connector keeps the current Snapshot of each metadata table's
//     Source: loaded once when a statement first needs it, reloaded every
//     metadata.refresh (5 minutes by default) and on RefreshMetadata, the
//     last good one kept when a load fails.
//   - The router (pure, no I/O) reads one immutable Snapshot per statement:
//     taking it never blocks, and Snapshot.Logical and Snapshot.Overlapping
//     do not allocate.
//   - The CLI runs MarkHot daily: it recomputes is_hot from max_time and the
//     configured HotWindow.
//
// A migration from hot to cold (a new history table with its span, the hot
// table's max_time moved, a location changed) is only a change of rows; the
// router follows it after the next refresh, without a restart. Package
// tiering does it for whole tables so that no query sees a row twice or not at
// all meanwhile, and checks the rows against the data and prepares the coming
// periods' tables.
//
// A table's rows are read within its span, except the newest table of a
// logical table (OpenAbove): its span is open above, so rows written past its
// max_time before the next table exists are read, not hidden.
//
// # Conventions
//
// min_time and max_time are DATETIME values, which carry no time zone; they
// are read as UTC (as a go-sql-driver DSN with parseTime=true&loc=UTC would),
// whatever the DSN used, and Table.Min and Table.Max are inclusive.
//
// Location rule: Table.Location names the backend that holds the table. When
// it is empty (NULL), a table with Hot set lives on the backend of role hot
// and any other table on the backend of role cold. The router resolves roles
// to backends; this package only reports Location and Hot.
//
// Physical tables are grouped into logical tables by name: the tables of
// logical table "orders" are those named "orders_" followed by a suffix that
// starts with a digit (orders_202501, orders_2025_01), so orders_items_202501
// is a table of "orders_items", never of "orders". Table names must be plain
// identifiers (letters, digits, '_' and '$'): the router writes them into SQL.
package metadata
