package routing

import (
	"slices"
	"testing"
)

func TestAssignedUserVars(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT @v := 1", []string{"@v"}},
		{"SELECT a, b INTO @A, @`b c` FROM t WHERE x = @w", []string{"@a", "@b c"}},
		{"DO @v := @v + 1, @u := 2", []string{"@v", "@u"}},
		{"UPDATE t SET c = (@n := @n + 1)", []string{"@n"}},
		{"INSERT INTO t VALUES (@x, 1)", nil},
		{"SELECT @v, @@session.sql_mode FROM t", nil},
		{"SELECT 1 INTO OUTFILE '/tmp/x'", nil},
		{"SELECT '@v := 1'", nil},
	} {
		toks, _ := lex(c.sql)
		if got := assignedUserVars(toks); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}
