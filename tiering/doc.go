// Package tiering operates obroute's hot/cold store: the other half of time routing, what
// operators do every month so that routing stays exact.
//
//   - Verify compares the shard metadata with the data: for every physical table, the span
//     of its shard-key values on the backend the metadata places it on. It reports rows
//     outside their table's span (which routing hides), tables missing on their backend,
//     overlapping spans (a row in both is counted twice), gaps and an uncovered present
//     (INSERTs there are refused). Report.OK is false when a row would be hidden or counted
//     twice.
//   - Prepare creates the next period's physical table on the hot backend (CREATE TABLE …
//     LIKE the newest one) and its metadata row before the period starts, so writes across
//     the boundary succeed. It is idempotent; run it daily.
//   - Move moves a table that left the hot window from hot to cold: guarded read-only,
//     copied in verified primary-key chunks under a rate limit, switched in the metadata,
//     given time for every obroute process to follow, fenced, deleted in chunks. No statement
//     routed by obroute sees a row of it twice or not at all while it runs; every step is
//     recorded, so a rerun after a crash resumes where it stopped.
//
// # Place in obroute
//
// The router (package routing) reads the shard metadata and never looks at the data; this
// package is the only one that does, and it only runs when an operator (or a scheduled job,
// through the obroute command) asks. Open builds a Store from the same configuration the
// application uses, so backend names, roles, the metadata table, the refresh interval and the
// time tables are the ones routing uses.
//
// The rules routing applies, which these operations keep true: a table's rows are read only
// within its span [min_time, max_time + 1s), except the newest table whose span is open above
// (metadata.OpenAbove); a table lives on its location, or by the role rule when it has none;
// an INSERT goes to the newest table covering its time and is refused when none does.
package tiering
