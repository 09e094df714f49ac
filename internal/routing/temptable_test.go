package routing

import (
	"errors"
	"slices"
	"testing"
)

// DROP TABLE, with TEMPORARY or without, lists the tables it drops, and the renames of ALTER
// TABLE … RENAME and RENAME TABLE are listed in the order the server makes them, so that the
// client session follows its temporary tables.
func TestTempTableDropsAndRenamesAreRead(t *testing.T) {
	r := ddlRouter(t)
	for _, tc := range []struct {
		sql     string
		dropped []string
		renamed []TableRename
	}{
		{"DROP TABLE audit_log", []string{"audit_log"}, nil},
		{"DROP TABLE IF EXISTS a, `B`", []string{"a", "b"}, nil},
		{"DROP TEMPORARY TABLE a", []string{"a"}, nil},
		{"ALTER TABLE tq RENAME TO items", nil, []TableRename{{"tq", "items"}}},
		{"ALTER TABLE tq RENAME AS shop.Items", nil, []TableRename{{"tq", "items"}}},
		{"ALTER TABLE tq ADD COLUMN x INT, RENAME u", nil, []TableRename{{"tq", "u"}}},
		{"ALTER TABLE tq RENAME COLUMN a TO b", nil, nil},
		{"ALTER TABLE tq RENAME TO a, RENAME TO b", nil, []TableRename{{"tq", "a"}, {"a", "b"}}},
		{"RENAME TABLE a TO b, c TO a", nil, []TableRename{{"a", "b"}, {"c", "a"}}},
		{"RENAME TABLES IF EXISTS a TO b", nil, []TableRename{{"a", "b"}}},
	} {
		st := r.Analyze(tc.sql)
		if !slices.Equal(st.TempTablesDropped, tc.dropped) || !slices.Equal(st.TablesRenamed, tc.renamed) {
			t.Errorf("%s: dropped %v, renamed %v; want %v, %v", tc.sql, st.TempTablesDropped, st.TablesRenamed, tc.dropped, tc.renamed)
		}
	}
}

// A DROP TABLE or rename naming a temporary table runs on its server session; one that would
// drop or rename there a table that is not a temporary table there, or move the temporary table
// to another database, is refused.
func TestTempTableDropsAndRenamesRoute(t *testing.T) {
	r := ddlRouter(t)
	sess := &SessionState{TempTables: map[string]string{"tq": "cold", "th": "hot", "tc": "cold"}}
	for _, sql := range []string{
		"DROP TABLE tq", "DROP TABLE tq, tc", "ALTER TABLE tq RENAME TO orders", "RENAME TABLE tq TO shop.items",
		"RENAME TABLE tq TO x, tc TO tq", "ALTER TABLE shop.tq RENAME TO audit_log",
	} {
		p, err := r.Route(Input{Statement: r.Analyze(sql), Session: sess})
		if err != nil || len(p.Targets) != 1 || p.Targets[0].Backend != "cold" || p.Type != UseTempTableSession {
			t.Errorf("%s: %+v %v, want the temporary tables' backend cold", sql, p, err)
		}
	}
	for _, sql := range []string{
		"DROP TABLE tq, items", "DROP TABLE tq, th", "RENAME TABLE tq TO th", "RENAME TABLE tq TO x, items TO y",
		"ALTER TABLE items RENAME TO tq", "RENAME TABLE tq TO x, th TO y", "ALTER TABLE tq RENAME TO other.tq",
		"RENAME TABLE other.tq TO tq2",
	} {
		if _, err := r.Route(Input{Statement: r.Analyze(sql), Session: sess}); !errors.Is(err, ErrSessionState) {
			t.Errorf("%s: %v, want ErrSessionState", sql, err)
		}
	}
}
