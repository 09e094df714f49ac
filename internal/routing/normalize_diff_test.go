package routing

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
)

// normRouter is a router with every rule that reads literals: the time-sharded orders, a
// shadow table whose algorithms read user_id, a static route.
func normRouter(t testing.TB) *Router {
	t.Helper()
	return ruledFixtureWith(t,
		shadow.Algorithm{Name: "ins", Kind: shadow.KindValueMatch, Column: "user_id", Operation: shadow.OpInsert, Values: []string{"0"}},
		shadow.Algorithm{Name: "sel", Kind: shadow.KindValueMatch, Column: "user_id", Operation: shadow.OpSelect, Values: []string{"0"}},
		shadow.Algorithm{Name: "upd", Kind: shadow.KindRegexMatch, Column: "user_id", Operation: shadow.OpUpdate, Regex: "0|9.*"}).r
}

// normTemplates are statement templates: %D is a literal compared with the shard key, %I an
// integer, %S a string, %N a decimal number, ? an argument (a date).
var normTemplates = []string{
	"SELECT id, amount FROM orders WHERE order_time >= %D AND order_time < %D AND user_id = %I",
	"SELECT id FROM orders WHERE order_time BETWEEN %D AND %D",
	"SELECT COUNT(*), SUM(amount) FROM orders WHERE order_time >= %D",
	"SELECT user_id, COUNT(*) FROM orders WHERE order_time >= %D AND status = %S GROUP BY user_id HAVING COUNT(*) > 2 ORDER BY 1 LIMIT 10",
	"SELECT id FROM orders WHERE order_time >= %D - INTERVAL 1 MONTH AND note LIKE %S",
	"SELECT id FROM orders WHERE order_time IN (%D, %D)",
	"SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL 7 DAY AND user_id = %I",
	"SELECT id FROM orders WHERE order_time >= DATE_ADD(%D, INTERVAL 1 DAY)",
	"SELECT id FROM orders WHERE order_time >= CAST(%D AS DATETIME)",
	"SELECT id FROM orders WHERE order_time >= TIMESTAMP(%D) AND amount > %N",
	"INSERT INTO orders (id, order_time, note) VALUES (%I, %D, %S)",
	"INSERT INTO orders (id, order_time, note) VALUES (%I, %D, %S), (%I, %D, %S)",
	"UPDATE orders SET status = %S WHERE order_time >= %D AND order_time < %D AND id = %I",
	"DELETE FROM orders WHERE order_time >= %D AND order_time < %D AND id = %I",
	"SELECT id FROM orders WHERE order_time >= ? AND user_id = %I",
	"SELECT id FROM orders WHERE user_id = %I AND order_time < ? AND order_time >= %D",
	"SELECT * FROM items WHERE id = %I",
	"SELECT * FROM audit_log WHERE id = %I AND note = %S",
	"INSERT INTO orders_log (user_id, note) VALUES (%I, %S)",
	"SELECT * FROM orders_log WHERE user_id = %I",
	"UPDATE orders_log SET note = %S WHERE user_id = %I",
	"/*+ OBROUTE(query_level=L1) */ SELECT id FROM orders WHERE order_time >= %D",
	"SELECT id FROM orders WHERE order_time >= %D ORDER BY order_time DESC LIMIT 5",
	"SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id WHERE o.order_time >= %D AND u.name = %S",
	"SELECT id FROM orders WHERE NOT (order_time < %D)",
	"SELECT id FROM orders WHERE order_time >= %D OR order_time < %D",
	"SELECT id FROM orders WHERE order_time > %D /*!50000 AND 1 = 1 */",
	"SELECT DISTINCT user_id FROM orders WHERE order_time >= %D LIMIT 8",
	"SELECT id FROM orders WHERE order_time >= -%I",
	"SELECT id, 'lit' AS x, %S FROM orders WHERE order_time >= %D",
	"SELECT id FROM orders WHERE order_time >= %D AND DATE(order_time) = %D",
	"SELECT AVG(amount) FROM orders WHERE order_time >= %D AND order_time < %D",
	"DELETE FROM orders WHERE order_time >= %D AND id = %I RETURNING id",
	"SELECT id FROM items WHERE id IN (%I, %I, %I) AND note <> %S",
	"SELECT id FROM orders WHERE order_time >= _utf8mb4%D",
	"SELECT id FROM orders WHERE order_time >= DATE '2025-02-01' AND user_id = %I",
	"SELECT id FROM orders WHERE order_time >= %D AND note = X'41'",
	"INSERT INTO orders (id, order_time) VALUES (%I, NOW())",
	"SELECT id FROM orders WHERE order_time >= NOW(3) - INTERVAL %I DAY",
	"SELECT id FROM orders WHERE order_time >= ADDDATE(%D, %I)",
	"SELECT id FROM orders WHERE order_time >= %D LIMIT 5 ROWS EXAMINED 100",
	"SELECT id FROM orders WHERE order_time >= %D AND amount > %N ORDER BY amount",
	"SELECT status, MAX(amount) FROM orders WHERE order_time >= %D GROUP BY status ORDER BY 2 DESC",
	"UPDATE orders SET note = %S WHERE order_time >= %D ORDER BY id LIMIT 1",
	"SELECT id FROM orders WHERE order_time = %D",
	"SELECT id FROM orders WHERE order_time >= %D -- trailing %S\n",
	"SELECT id FROM orders WHERE order_time >= %D AND note = 'a' 'b' AND status = %S",
	"SELECT id FROM orders WHERE (order_time >= %D AND order_time < %D) AND amount BETWEEN %N AND %N",
	"SELECT SUM(amount) FROM orders WHERE order_time >= %D AND order_time < %D HAVING SUM(amount) > 100",
	"SELECT id FROM orders WHERE order_time >= %D AND user_id IN (SELECT id FROM users WHERE name = %S)",
	"SELECT name FROM users WHERE id = %I",
	"UPDATE items SET note = %S, amount = amount + %N WHERE id = %I",
	"INSERT INTO items (id, note) VALUES (%I, %S) ON DUPLICATE KEY UPDATE note = %S",
	"DELETE FROM audit_log WHERE id = %I",
}

var (
	normDates = []string{"'2025-03-01'", "'2025-03-01 10:00:00'", `"2025-02-15"`, "20250301", "20250301120000", "'2025-02-30'",
		"'2025/03/01'", "'2024-12-31 23:59:59.5'", "'abc'", "'2024-08-10'", "'2025-01-01'", "'2024-12-31'", "'2025-03-14 00:00:00'",
		"20241201.5", "'2025-03-10' '12:00:00'", "'9999-12-31'", "'2025-03-15 12:00:00.000001'"}
	normInts    = []string{"0", "1", "42", "7", "9", "90", "123456789012"}
	normStrings = []string{"'x'", "'it''s'", `"a\"b"`, `'a\%b'`, "''", "'0'", "'9z'", "'password'", "'a\\'b'", "'é'"}
	normNums    = []string{"1.5", ".5", "1e3", "10", "0.000"}
)

// fill instantiates a template with random literals.
func fill(rng *rand.Rand, tmpl string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' || i+1 == len(tmpl) {
			b.WriteByte(tmpl[i])
			continue
		}
		i++
		var from []string
		switch tmpl[i] {
		case 'D':
			from = normDates
		case 'I':
			from = normInts
		case 'S':
			from = normStrings
		case 'N':
			from = normNums
		}
		b.WriteString(from[rng.IntN(len(from))])
	}
	return b.String()
}

var routeErrors = []error{ErrUnknownBackend, ErrCrossBackend, ErrCrossBackendTx, ErrShadowConflict, ErrNoShadowBackend,
	ErrUnreadable, ErrNoTimeRange, ErrShardKeyFunction, ErrBadTimeValue, ErrBadLimit, ErrLevelViolation,
	ErrColdQueryRequired, ErrColdWrite, ErrCrossBackendWrite, ErrNoShardTable, ErrTimeShardedJoin, ErrNotMergeable}

// samePlan says how two routes of one statement differ, "" when they do not.
func samePlan(a, b *Plan, errA, errB error) string {
	if (errA == nil) != (errB == nil) {
		return fmt.Sprintf("error %v, want %v", errA, errB)
	}
	if errA != nil {
		for _, e := range routeErrors {
			if errors.Is(errA, e) != errors.Is(errB, e) {
				return fmt.Sprintf("error %v, want %v", errA, errB)
			}
		}
		return ""
	}
	if a.Type != b.Type || a.Class != b.Class || a.Level != b.Level || a.Shadow != b.Shadow || a.Budget != b.Budget ||
		a.TypesUnknown() != b.TypesUnknown() || !slices.Equal(a.SkippedWeights(), b.SkippedWeights()) || len(a.Targets) != len(b.Targets) {
		return fmt.Sprintf("plan %+v, want %+v", a, b)
	}
	if !reflect.DeepEqual(a.Merge, b.Merge) {
		return fmt.Sprintf("merge %+v, want %+v", a.Merge, b.Merge)
	}
	for i := range a.Targets {
		x, y := a.Targets[i], b.Targets[i]
		if x.Backend != y.Backend || x.Cold != y.Cold || !slices.Equal(x.Tables, y.Tables) || !sameTokens(x.SQL, y.SQL) || !sameArgs(x.Args, y.Args) {
			return fmt.Sprintf("target %d: %s %q %v, want %s %q %v", i, x.Backend, x.SQL, x.Args, y.Backend, y.SQL, y.Args)
		}
	}
	return ""
}

func sameArgs(a, b []driver.NamedValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Ordinal != b[i].Ordinal || !reflect.DeepEqual(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// A statement that hits the cache with other literals is routed as its own analysis routes
// it: same targets (backends, physical tables, statements sent token for token, arguments),
// merge, level, class and refusals, and the same EXPLAIN ROUTE words. Statements of 54
// templates with fresh random literals, from several sessions and hints.
func TestNormalizedHitRoutesAsFreshParse(t *testing.T) {
	r := normRouter(t)
	rng := rand.New(rand.NewPCG(3, 14))
	sessions := []*SessionState{{}, {TimeZone: "+08:00"}, {InTransaction: true, TxBackend: "hot", LastBackend: "hot"}}
	hintSets := []hint.Set{{}, {Level: hint.L1}, {ColdQuery: true}, {Shadow: hint.ShadowOn}}
	dates := []string{"2025-03-01", "2024-11-20 08:00:00", "2025-03-14"}
	var shared, byArgs, failed, ok int
	for round := range 12 {
		for _, tmpl := range normTemplates {
			sql := fill(rng, tmpl)
			var a []driver.NamedValue
			for range strings.Count(sql, "?") {
				a = append(a, driver.NamedValue{Ordinal: len(a) + 1, Value: dates[rng.IntN(len(dates))]})
			}
			in := Input{Args: a, Session: sessions[rng.IntN(len(sessions))], Hints: hintSets[rng.IntN(len(hintSets))]}
			cached := r.Analyze(sql)
			if round > 0 && cached.lits != nil {
				byArgs++
			}
			fresh := r.analyze(sql, nil)
			if cached.SQL != sql || cached.LogText() != fresh.LogText() || cached.Params != fresh.Params || cached.Kind != fresh.Kind ||
				!slices.Equal(cached.Tables, fresh.Tables) || cached.SessionDependent != fresh.SessionDependent || cached.Hints != fresh.Hints {
				t.Errorf("%s: analysis %q %q %d %s %v, want %q %d %s %v", sql, cached.SQL, cached.LogText(), cached.Params, cached.Kind, cached.Tables,
					fresh.LogText(), fresh.Params, fresh.Kind, fresh.Tables)
			}
			in.Statement = fresh
			fp, ferr := r.route(in)
			in.Statement = cached
			cp, cerr := r.route(in) // without the fallback of Route
			if d := samePlan(cp, fp, cerr, ferr); d != "" {
				t.Errorf("%s\n%s", sql, d)
				continue
			}
			in.Explain = true
			cp, cerr = r.Route(in)
			in.Statement = fresh
			fp, ferr = r.Route(in)
			if d := samePlan(cp, fp, cerr, ferr); d != "" || cerr == nil && !slices.Equal(cp.Prompts, fp.Prompts) ||
				cerr != nil && cerr.Error() != ferr.Error() {
				t.Errorf("%s explained\n%s\n%q %v\nwant %q %v", sql, d, prompts(cp), cerr, prompts(fp), ferr)
			}
			if ferr != nil {
				failed++
			} else {
				ok++
			}
		}
	}
	s := r.CacheStats()
	for _, tmpl := range normTemplates {
		if n, ok := normalizeLiterals(fill(rng, tmpl), nil, nil, true); ok {
			if e := r.cache.find(n.key); e != nil && e.mode == entryShared {
				shared++
			}
		}
	}
	t.Logf("%d statements routed, %d refused; %d hits read their literals as arguments; %d templates shared as analysed; cache %+v", ok, failed, byArgs, shared, s)
	// The corpus exercises both kinds of shared entries and refusals, and mostly hits.
	if byArgs < 200 || shared < 4 || failed < 50 || s.HitRate() < 0.6 {
		t.Errorf("the corpus covers too little: %d hits read literals as arguments, %d shared templates, %d refusals, hit rate %.2f", byArgs, shared, failed, s.HitRate())
	}
}

func prompts(p *Plan) []string {
	if p == nil {
		return nil
	}
	return p.Prompts
}

// quoteLiteral writes s as a string literal in one of MySQL's styles.
func quoteLiteral(s string, style uint8) string {
	switch style % 3 {
	case 0:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case 1:
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// Any literal values: the cache hit routes as the text's own analysis.
func FuzzNormalizedHitRoutesAsFreshParse(f *testing.F) {
	f.Add(uint8(0), "2025-03-01", "x", int64(42), uint8(0))
	f.Add(uint8(10), "2025-03-14 10:00:00", "it's", int64(0), uint8(1))
	f.Add(uint8(18), "2024-12-31 23:59:59.999999", `a\%b`, int64(-7), uint8(2))
	f.Add(uint8(3), "20250301", "", int64(9), uint8(0))
	r := normRouter(f)
	f.Fuzz(func(t *testing.T, k uint8, date, str string, num int64, style uint8) {
		if strings.IndexByte(date, 0) >= 0 || strings.IndexByte(str, 0) >= 0 {
			return
		}
		tmpl := normTemplates[int(k)%len(normTemplates)]
		n := strings.NewReplacer("%D", quoteLiteral(date, style), "%S", quoteLiteral(str, style+1),
			"%I", fmt.Sprint(num), "%N", fmt.Sprintf("%d.%d", num/100, num%100)).Replace(tmpl)
		r.Analyze(fill(rand.New(rand.NewPCG(uint64(k), 1)), tmpl)) // the template's entry
		in := Input{Statement: r.Analyze(n), Args: []driver.NamedValue{{Ordinal: 1, Value: "2025-03-02"}}}
		cp, cerr := r.route(in)
		in.Statement = r.analyze(n, nil)
		fp, ferr := r.route(in)
		if d := samePlan(cp, fp, cerr, ferr); d != "" {
			t.Errorf("%s\n%s", n, d)
		}
	})
}
