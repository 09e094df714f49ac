package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/metadata"
)

// REPLACE, INSERT … ON DUPLICATE KEY UPDATE and INSERT IGNORE resolve a row that duplicates a
// unique key of an existing one (replace it, update it, skip the new one). On a time-sharded
// table a row goes to the table of its shard-key value, and the server sees only that table: an
// existing row with the same key elsewhere is not found, and a second row is inserted where one
// table would have resolved the duplicate. Exact only when every unique key of the table the row
// goes to (its primary key included) holds the shard-key column: a row duplicating such a key has
// the same shard-key value, so it is in the same table. The connector reads the unique keys of
// every physical table with its column precisions (SetUniqueKeys); until they are read such
// statements are refused.

// upsertKind names the duplicate-resolving form of an INSERT, "" for a plain INSERT.
func upsertKind(n *sqlparser.Insert) string {
	switch {
	case n.Action == sqlparser.ReplaceStr:
		return "REPLACE"
	case len(n.OnDup) > 0:
		return upsertOnDup
	case n.Ignore != "":
		return "INSERT IGNORE"
	}
	return ""
}

// upsertOnDup is upsertKind's name of INSERT … ON DUPLICATE KEY UPDATE.
const upsertOnDup = "INSERT … ON DUPLICATE KEY UPDATE"

// onDupKeepsKey reports whether the ON DUPLICATE KEY UPDATE of n assigns key = VALUES(key).
func onDupKeepsKey(n *sqlparser.Insert, key string) bool {
	for _, e := range n.OnDup {
		if v, ok := e.Expr.(*sqlparser.ValuesFuncExpr); ok && e.Name.Name.Lowered() == key && v.Name.Name.Lowered() == key {
			return true
		}
	}
	return false
}

// onDupSetsKey refuses an ON DUPLICATE KEY UPDATE that assigns the shard key key, as the
// equivalent UPDATE is refused: the updated row could leave the span of its table. Assigning the
// row's own value, key = VALUES(key), is kept (GORM's upserts assign every column so): under the
// unique-key rule above the duplicate has that value already.
func onDupSetsKey(n *sqlparser.Insert, key, shardKey string) error {
	for _, e := range n.OnDup {
		if e.Name.Name.Lowered() != key {
			continue
		}
		if v, ok := e.Expr.(*sqlparser.ValuesFuncExpr); ok && v.Name.Name.Lowered() == key {
			continue
		}
		return errorf("%w: INSERT … ON DUPLICATE KEY UPDATE sets the shard key %s to %s, which may move the row to another table, as an UPDATE of it would; DELETE and INSERT the row instead, or assign %s = VALUES(%s)",
			ErrNotMergeable, shardKey, nodeText(e.Expr), shardKey, shardKey)
	}
	return nil
}

// SetUniqueKeys records, per physical table, the first unique key (primary key first) that does
// not hold the table's shard-key column, described as the server names it ("PRIMARY (id)"), or
// "" when every unique key holds it; as read from the backend that holds each table. A table
// never given is unknown. Without time tables it does nothing.
func (r TimeFacts) SetUniqueKeys(keys map[string]string) {
	if r.time != nil && len(keys) > 0 {
		r.time.facts.update(func(f *storeFacts) {
			for t, k := range keys {
				f.unique[strings.ToLower(t)] = k
			}
		})
	}
}

// ForgetTables forgets the shard-key columns and unique keys read of the physical tables of
// cols: DDL ran on them. Unknown, they are read again (UnknownKeyColumns lists them); until
// then what needs them is refused or routed as for a column of unknown precision.
func (r TimeFacts) ForgetTables(cols []KeyColumn) {
	if r.time != nil && len(cols) > 0 {
		r.time.facts.update(func(f *storeFacts) {
			for _, c := range cols {
				delete(f.keys, strings.ToLower(c.Table))
				delete(f.unique, strings.ToLower(c.Table))
			}
		})
	}
}

// checkUpsert refuses a duplicate-resolving INSERT whose rows go to tables where a duplicate of
// theirs may live in another table (see above).
func (t *timeRouter) checkUpsert(ts *timeStatement, tables []metadata.Table, locs []string) error {
	f := t.facts.p.Load()
	for i := range tables {
		name := tables[i].Name
		var key string
		known := false
		if f != nil {
			key, known = f.unique[strings.ToLower(name)]
		}
		switch {
		case !known:
			return errorf("%w: %s into %s needs the unique keys of %s, which obroute has not read (is the table missing on backend %s? they are read with the shard metadata, and again at the next refresh); run it again later, or write it as a plain INSERT",
				ErrNotMergeable, ts.insert.upsert, ts.table.Table, name, locs[i])
		case key != "":
			return errorf("%w: %s into %s: the unique key %s of %s does not hold the shard key %s, so the row it would resolve a duplicate with may be in another table's span, which the server does not see: one table would replace, update or skip that row, obroute would insert a second one; add %s to every unique key of the physical tables, or write a DELETE or UPDATE by the key and a plain INSERT",
				ErrNotMergeable, ts.insert.upsert, ts.table.Table, key, name, ts.table.ShardKey, ts.table.ShardKey)
		}
	}
	return nil
}
