package connector

import (
	"context"
	"database/sql/driver"
	"log/slog"
	"strings"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// A connector with one backend and no rule (every plain go-sql-driver DSN) has nothing to route:
// every statement goes to that backend. Such a connector passes the statements that leave the
// client session's state as it is (SELECT, INSERT, UPDATE, DELETE, REPLACE, WITH, DO, SHOW) to
// its server session without parsing them: their first word, read after the leading comments,
// says what they are. Everything else takes the routed path (a parse, cached by text), which
// records what the client session must know: transactions (BEGIN, START, COMMIT, ROLLBACK, XA,
// SAVEPOINT), session state (SET, USE), temporary tables and implicit commits (DDL),
// EXPLAIN ROUTE, and any statement led by a hint comment or run under hints.

// passesThrough reports whether a connector of cfg passes statements through: one backend, no
// static route, no shadow rule, no time-sharded table, and no observer (which is told each
// statement's plan).
func passesThrough(cfg *config.Config, o *options) bool {
	return len(cfg.Backends) == 1 && len(cfg.Routes) == 0 && cfg.Shadow == nil && len(cfg.TimeTables) == 0 && o.observer == nil
}

// passKinds are the first words of the statements that pass through, with their kind.
var passKinds = [...]struct {
	word string
	kind routing.Kind
}{
	{"select", routing.KindSelect}, {"insert", routing.KindInsert}, {"update", routing.KindUpdate},
	{"delete", routing.KindDelete}, {"replace", routing.KindInsert}, {"with", routing.KindSelect},
	{"do", routing.KindOther}, {"show", routing.KindShow},
}

// passKind returns the kind of a statement that passes through, and false for one that must be
// analysed: one whose leading comments hold a hint, or whose first word is not a passKinds word.
// It does not allocate.
func passKind(query string) (routing.Kind, bool) {
	if strings.IndexByte(query, '@') >= 0 {
		return 0, false // it may assign a user variable (@v := …, INTO @v): session state
	}
	if hasLockCall(query) {
		return 0, false // GET_LOCK …: the server session then holds the lock
	}
	i := 0
	for i < len(query) && isSpaceByte(query[i]) {
		i++
	}
	if i < len(query) && (query[i] == '/' || query[i] == '-' || query[i] == '#') {
		if hints, _, err := hint.ParseLeading(query); err != nil || !hints.IsZero() {
			return 0, false
		}
		i = hint.StatementStart(query)
	}
	j := i
	for j < len(query) && isLetter(query[j]) {
		j++
	}
	if j < len(query) && (isWordByte(query[j]) || query[j] == '.') {
		return 0, false // a longer name, not a keyword
	}
	word := query[i:j]
	k := j
	for k < len(query) && isSpaceByte(query[k]) {
		k++
	}
	if k+1 < len(query) && query[k] == '/' && query[k+1] == '*' {
		return 0, false // a comment right after the first word: a hint there is refused
	}
	for _, p := range passKinds {
		if equalFoldASCII(word, p.word) {
			return p.kind, true
		}
	}
	return 0, false
}

// passthrough runs a statement that passes through (see passKind) on the one backend, as the
// routed path would run it there, and reports false, having done nothing, for a statement that
// must be analysed.
func (cs *clientSession) passthrough(ctx context.Context, query string, args []driver.NamedValue, wantRows bool) (driver.Result, driver.Rows, bool, error) {
	if !cs.c.passthrough || cs.unusable() || cs.tx.lost || cs.assigned.s != nil || cs.funcs.holds() {
		return nil, nil, false, nil
	}
	kind, ok := passKind(query)
	if !ok || !cs.tx.hints.IsZero() || !hint.FromContext(ctx).IsZero() || cs.c.logger.Enabled(ctx, slog.LevelDebug) {
		return nil, nil, false, nil
	}
	p := &cs.pass
	p.st = routing.Statement{SQL: query, Kind: kind}
	p.plan = routing.Plan{Statement: &p.st, Type: routing.UseRoutePolicy, Class: routing.ClassDefault, InTransaction: cs.tx.active}
	if cs.tx.active && cs.tx.backend != "" {
		p.plan.Type, p.plan.Class = routing.UseLastSession, routing.ClassForced
	}
	p.target[0] = routing.Target{Backend: cs.c.cfg.Default, SQL: query, Args: args}
	p.plan.Targets = p.target[:]
	cs.c.stats.routes.add(cs.statsShard, p.plan.Class)
	res, rows, err := cs.execute(ctx, &p.plan, wantRows, nil)
	return res, rows, true, cs.keepSession(err)
}

// passed is the statement a client session passes through, and its plan: one of each per client
// session, reused by every statement that passes through.
type passed struct {
	st     routing.Statement
	plan   routing.Plan
	target [1]routing.Target
}

// hasLockCall reports whether query may call a user-level lock function: it holds "_lock" or
// "_locks" followed by "(" (GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK …), in any
// case. It does not allocate.
func hasLockCall(query string) bool {
	for i := 0; ; i++ {
		k := strings.IndexByte(query[i:], '_')
		if k < 0 {
			return false
		}
		i += k
		if i+5 >= len(query) || !equalFoldASCII(query[i+1:i+5], "lock") {
			continue
		}
		j := i + 5
		if j < len(query) && query[j]|0x20 == 's' {
			j++
		}
		for j < len(query) && isSpaceByte(query[j]) {
			j++
		}
		if j < len(query) && query[j] == '(' {
			return true
		}
	}
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWordByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// equalFoldASCII reports whether s equals the lower-case ASCII word lower, ignoring case.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
