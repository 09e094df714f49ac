package routing

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/obroute/obroute/internal/merge"
)

// splitPlan routes sql over December 2024 .. February 2025 (one cold, two hot tables).
func splitPlan(t *testing.T, sql string) (*Plan, error) {
	t.Helper()
	f := standard(t)
	return f.route(sql+" ", nil, Input{})
}

const splitWhere = " where order_time >= '2024-12-01' and order_time < '2025-03-01'"

// weightItem is the hidden weight column of e, as the n-th item of a leg.
func weightItem(e string, n int) string {
	return strings.Join(merge.WeightSQL(), e) + " as _obroute_" + strconv.Itoa(n)
}

func TestMergePlan(t *testing.T) {
	cases := []struct {
		name string
		sql  string
		// leg is the cold backend's statement (one leg) with the clamp cut off.
		leg  string
		spec merge.Spec
	}{
		{
			name: "plain union",
			sql:  "select id, amount from orders" + splitWhere,
			leg:  "select id, amount from orders_202412 where",
			spec: merge.Spec{Visible: 2, Limit: merge.NoLimit},
		},
		{
			name: "order by selected and hidden columns, limit offset; the shard key needs no weight",
			sql:  "select id, amount as a from orders" + splitWhere + " order by a desc, order_time limit 20, 10",
			leg:  "select id, amount as a, " + weightItem("amount", 3) + ", order_time as _obroute_4, (amount) + 0 as _obroute_5 from orders_202412 where",
			spec: merge.Spec{Visible: 2, OrderBy: []merge.OrderKey{{Column: 1, Desc: true}, {Column: 3}}, Offset: 20, Limit: 10, Weights: []int{0, 2, 0, 0, 0}, Ordinals: []int{0, 4, 0, 0, 0}},
		},
		{
			name: "order by position",
			sql:  "select id, amount from orders" + splitWhere + " order by 2, 1 desc limit 3",
			leg:  "select id, amount, " + weightItem("amount", 3) + ", " + weightItem("id", 4) + ", (amount) + 0 as _obroute_5, (id) + 0 as _obroute_6 from orders_202412 where",
			spec: merge.Spec{Visible: 2, OrderBy: []merge.OrderKey{{Column: 1}, {Column: 0, Desc: true}}, Limit: 3, Weights: []int{3, 2, 0, 0, 0, 0}, Ordinals: []int{5, 4, 0, 0, 0, 0}},
		},
		{
			name: "aggregates without group; AVG stays, with its SUM, COUNT and the session's div_precision_increment",
			sql:  "select count(*), count(amount), sum(amount), min(order_time), max(order_time), avg(amount) from orders" + splitWhere,
			leg: "select count(*), count(amount), sum(amount), min(order_time), max(order_time), avg(amount), " +
				"sum(amount) as _obroute_7, count(amount) as _obroute_8, @@div_precision_increment as _obroute_9 from orders_202412 where",
			spec: merge.Spec{Visible: 6, Limit: merge.NoLimit, Aggregates: []merge.Aggregate{
				{Func: merge.AggCount, Column: 0}, {Func: merge.AggCount, Column: 1}, {Func: merge.AggSum, Column: 2},
				{Func: merge.AggMin, Column: 3}, {Func: merge.AggMax, Column: 4},
				{Func: merge.AggAvg, Column: 5, Sum: 6, Count: 7, Increment: 8, Arg: merge.ArgColumn}}},
		},
		{
			name: "SUM and AVG of a division: exact partial sums",
			sql:  "select sum(amount/3), avg(amount/3) from orders" + splitWhere,
			leg: "select sum(amount / 3) as `sum(amount/3)`, avg(amount / 3) as `avg(amount/3)`, " +
				strings.Join(merge.ExactSumSQL(), "sum(amount / 3)") + " as _obroute_3, sum(amount / 3) as _obroute_4, count(amount / 3) as _obroute_5, " +
				"@@div_precision_increment as _obroute_6, (sum(amount / 3) * 0 + 2) / 3 as _obroute_7 from orders_202412 where",
			spec: merge.Spec{Visible: 2, Limit: merge.NoLimit, Aggregates: []merge.Aggregate{
				{Func: merge.AggSum, Column: 0, Exact: 2},
				{Func: merge.AggAvg, Column: 1, Sum: 3, Count: 4, Increment: 5, Exact: 2, Mode: 6, Arg: merge.ArgArithmetic}}},
		},
		{
			name: "group by, having on a hidden aggregate, order by aggregate, limit not pushed",
			sql:  "select user_id, sum(amount) as total from orders" + splitWhere + " group by user_id having count(*) > 2 and total >= 10.50 order by total desc, user_id limit 10",
			leg:  "select user_id, sum(amount) as total, " + weightItem("user_id", 3) + ", count(*) as _obroute_4, (user_id) + 0 as _obroute_5 from orders_202412 where",
			spec: merge.Spec{Visible: 2, GroupBy: []int{0}, Limit: 10, Weights: []int{2, 0, 0, 0, 0}, Ordinals: []int{4, 0, 0, 0, 0},
				Aggregates: []merge.Aggregate{{Func: merge.AggSum, Column: 1}, {Func: merge.AggCount, Column: 3}},
				Having:     merge.And(merge.Cmp(">", merge.Col(3), merge.Lit(int64(2))), merge.Cmp(">=", merge.Col(1), merge.Lit("10.50"))),
				OrderBy:    []merge.OrderKey{{Column: 1, Desc: true}, {Column: 0}}},
		},
		{
			name: "group by a column not selected is hidden",
			sql:  "select count(*) from orders" + splitWhere + " group by status",
			leg:  "select count(*), `status` as _obroute_2, " + weightItem("`status`", 3) + ", (`status`) + 0 as _obroute_4 from orders_202412 where",
			spec: merge.Spec{Visible: 1, GroupBy: []int{1}, OrderBy: []merge.OrderKey{{Column: 1}}, Limit: merge.NoLimit, Weights: []int{0, 2, 0, 0}, Ordinals: []int{0, 3, 0, 0}, Aggregates: []merge.Aggregate{{Func: merge.AggCount, Column: 0}}},
		},
		{
			name: "having avg not selected",
			sql:  "select status from orders" + splitWhere + " group by 1 having avg(amount) is not null",
			leg: "select `status`, " + weightItem("`status`", 2) + ", avg(amount) as _obroute_3, sum(amount) as _obroute_4, count(amount) as _obroute_5, " +
				"@@div_precision_increment as _obroute_6, (`status`) + 0 as _obroute_7 from orders_202412 where",
			spec: merge.Spec{Visible: 1, GroupBy: []int{0}, OrderBy: []merge.OrderKey{{Column: 0}}, Limit: merge.NoLimit, Weights: []int{1, 0, 0, 0, 0, 0, 0}, Ordinals: []int{6, 0, 0, 0, 0, 0, 0},
				Aggregates: []merge.Aggregate{{Func: merge.AggAvg, Column: 2, Sum: 3, Count: 4, Increment: 5, Arg: merge.ArgColumn}},
				Having:     merge.Not(merge.IsNull(merge.Col(2)))},
		},
		{
			name: "having on a group key and on MIN: computed by the sub-queries",
			sql:  "select status, min(status) from orders" + splitWhere + " group by status having status <> 'new' and min(status) > ?",
			leg: "select `status`, min(`status`) as `min(status)`, " + weightItem("min(`status`)", 3) + ", " + weightItem("`status`", 4) + ", " +
				"`status` != 'new' and min(`status`) > ? as _obroute_5, (`status`) + 0 as _obroute_6 from orders_202412 where",
			spec: merge.Spec{Visible: 2, GroupBy: []int{0}, OrderBy: []merge.OrderKey{{Column: 0}}, Limit: merge.NoLimit, Weights: []int{3, 2, 0, 0, 0, 0}, Ordinals: []int{5, 0, 0, 0, 0, 0},
				Aggregates: []merge.Aggregate{{Func: merge.AggMin, Column: 1, Carry: []int{4}}},
				Having:     merge.Col(4)},
		},
		{
			name: "distinct with limit pushed",
			sql:  "select distinct status from orders" + splitWhere + " order by status limit 4",
			leg:  "select distinct `status`, " + weightItem("`status`", 2) + ", (`status`) + 0 as _obroute_3 from orders_202412 where",
			spec: merge.Spec{Visible: 1, Distinct: true, OrderBy: []merge.OrderKey{{Column: 0}}, Limit: 4, Weights: []int{1, 0, 0}, Ordinals: []int{2, 0, 0}},
		},
		{
			name: "expressions over aggregates: the aggregates merged hidden, the expression computed",
			sql:  "select user_id, sum(amount)/count(*) as q, round(avg(amount), 1) from orders" + splitWhere + " group by user_id order by max(amount) - min(amount)",
			leg: "select user_id, sum(amount) / count(*) as q, round(avg(amount), 1), sum(amount) as _obroute_4, count(*) as _obroute_5, " +
				"@@div_precision_increment as _obroute_6, avg(amount) as _obroute_7, sum(amount) as _obroute_8, count(amount) as _obroute_9, " +
				weightItem("user_id", 10) + ", max(amount) - min(amount) as _obroute_11, max(amount) as _obroute_12, " + weightItem("max(amount)", 13) +
				", min(amount) as _obroute_14, " + weightItem("min(amount)", 15) + ", (user_id) + 0 as _obroute_16 from orders_202412 where",
			spec: merge.Spec{Visible: 3, GroupBy: []int{0}, Limit: merge.NoLimit, Weights: []int{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 14, 0, 0}, Ordinals: []int{15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
				OrderBy: []merge.OrderKey{{Column: 10}},
				Aggregates: []merge.Aggregate{{Func: merge.AggSum, Column: 3}, {Func: merge.AggCount, Column: 4},
					{Func: merge.AggAvg, Column: 6, Sum: 7, Count: 8, Increment: 5, Arg: merge.ArgColumn},
					{Func: merge.AggMax, Column: 11}, {Func: merge.AggMin, Column: 13}},
				Computed: []merge.Computed{
					{Column: 1, Expr: merge.Arith('/', merge.Agg(3), merge.Agg(4)), Increment: 5},
					{Column: 2, Expr: merge.Round(merge.Agg(6), 1)},
					{Column: 10, Expr: merge.Arith('-', merge.Agg(11), merge.Agg(13))}}},
		},
		{
			name: "select * with order by: the hidden columns come first, then the qualified *",
			sql:  "select * from orders o" + splitWhere + " order by status desc, id limit 5",
			leg:  "select `status` as _obroute_2, " + weightItem("`status`", 3) + ", id as _obroute_4, " + weightItem("id", 5) + ", o.* from orders_202412 as o where",
			spec: merge.Spec{Leading: 4, OrderBy: []merge.OrderKey{{Column: 0, Desc: true}, {Column: 2}}, Limit: 5, Weights: []int{1, 0, 3, 0, 0}},
		},
		{
			name: "select distinct *: rows of different tables differ in the shard key, so the legs deduplicate alone",
			sql:  "select distinct * from orders" + splitWhere + " limit 3",
			leg:  "select distinct * from orders_202412 where",
			spec: merge.Spec{Limit: 3},
		},
		{
			name: "select distinct t.* ordered by the shard key",
			sql:  "select distinct o.* from orders o" + splitWhere + " order by order_time desc",
			leg:  "select distinct order_time as _obroute_2, o.* from orders_202412 as o where",
			spec: merge.Spec{Leading: 1, OrderBy: []merge.OrderKey{{Column: 0, Desc: true}}, Limit: merge.NoLimit},
		},
		{
			name: "distinct aggregates: the legs group by the argument too, which they return",
			sql:  "select status, count(distinct user_id), sum(distinct user_id), count(*) from orders" + splitWhere + " group by status",
			leg: "select `status`, count(distinct user_id), sum(distinct user_id), count(*), user_id as _obroute_5, " + weightItem("user_id", 6) + ", " +
				weightItem("`status`", 7) + ", (`status`) + 0 as _obroute_8 from orders_202412 where",
			spec: merge.Spec{Visible: 4, GroupBy: []int{0}, OrderBy: []merge.OrderKey{{Column: 0}}, Limit: merge.NoLimit, Weights: []int{6, 0, 0, 0, 5, 0, 0, 0}, Ordinals: []int{7, 0, 0, 0, 0, 0, 0, 0},
				Aggregates: []merge.Aggregate{{Func: merge.AggCount, Column: 1, Distinct: []int{4}}, {Func: merge.AggSum, Column: 2, Distinct: []int{4}}, {Func: merge.AggCount, Column: 3}}},
		},
		{
			name: "count distinct shard key is exact",
			sql:  "select count(distinct order_time) from orders" + splitWhere,
			leg:  "select count(distinct order_time) from orders_202412 where",
			spec: merge.Spec{Visible: 1, Limit: merge.NoLimit, Aggregates: []merge.Aggregate{{Func: merge.AggCount, Column: 0}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := splitPlan(t, c.sql)
			if err != nil {
				t.Fatal(err)
			}
			if p.Merge == nil {
				t.Fatal("no merge spec")
			}
			if !reflect.DeepEqual(*p.Merge, c.spec) {
				t.Errorf("spec\n got %+v\nwant %+v", *p.Merge, c.spec)
			}
			got := p.Targets[0].SQL
			if !strings.HasPrefix(got, coldPrefix+c.leg+" ") {
				t.Errorf("cold leg\n got %s\nwant prefix %s", got, c.leg)
			}
		})
	}
}

// A DISTINCT leg keeps its LIMIT, but a per-backend UNION ALL of DISTINCT legs must not be
// limited: the legs repeat each other's values, and "LIMIT 3 OFFSET 5" over six cold tables of
// the same user_ids kept only copies of the smallest one (found by internal/difftest). And a
// leg keeps its LIMIT only when its column is not weighed: the weights of a text column tell
// apart values its collation holds equal, so that the leg's first rows may hold fewer distinct
// values than the LIMIT needs.
func TestDistinctLimitNotPushedOverUnion(t *testing.T) {
	f := standard(t)
	const sql = "select distinct user_id from orders where order_time >= '2024-09-01' and order_time < '2025-02-01' order by user_id limit 3 offset 5"
	p, err := f.route(sql, nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.TypesUnknown() || strings.Count(p.Targets[0].SQL, " limit 9223372036854775807)") != 4 {
		t.Errorf("types unknown %v: the legs must not be limited while the column may be text:\n%s", p.TypesUnknown(), p.Targets[0].SQL)
	}
	// user_id is an INT: its weight is not asked for, and the legs are limited.
	p.Types.Store(nil, []merge.ColumnType{{DatabaseTypeName: "INT"}, {DatabaseTypeName: "VARBINARY"}}, nil)
	if p, err = f.route(sql, nil, Input{}); err != nil {
		t.Fatal(err)
	}
	cold := p.Targets[0].SQL
	if strings.Contains(cold, "WEIGHT_STRING") || !slices.Equal(p.SkippedWeights(), []int{0}) {
		t.Errorf("the weight of an INT column is asked for (skipped %v):\n%s", p.SkippedWeights(), cold)
	}
	if n := strings.Count(cold, " limit 8)"); n != 4 {
		t.Errorf("%d of 4 cold legs limited to 8 rows:\n%s", n, cold)
	}
	if !strings.HasSuffix(cold, ") order by 3 asc, 1 asc") {
		t.Errorf("the cold UNION ALL must not be limited:\n%s", cold)
	}
	if p.Merge.Offset != 5 || p.Merge.Limit != 3 || !p.Merge.Distinct {
		t.Errorf("merge %+v, want DISTINCT LIMIT 3 OFFSET 5", *p.Merge)
	}
}

func TestMergeRefusals(t *testing.T) {
	cases := []struct{ name, sql, says string }{
		{"window function", "select id, row_number() over (order by id) from orders" + splitWhere, "window functions"},
		{"named window", "select id, sum(amount) over w from orders" + splitWhere + " window w as (partition by user_id)", "window functions"},
		{"limit in subquery", "select id from orders" + splitWhere + " and user_id in (select id from (select id from users limit 5) x)", "LIMIT inside a subquery"},
		{"distinct aggregates of two arguments", "select count(distinct user_id), sum(distinct amount) from orders" + splitWhere, "one statement per list"},
		{"distinct aggregates of the shard key and another", "select count(distinct order_time), count(distinct user_id) from orders" + splitWhere, "one statement per list"},
		{"a sum of a quotient in sub-queries grouped by a distinct argument", "select count(distinct user_id), sum(amount / 3) from orders" + splitWhere, "SUM(ROUND(amount / 3, n))"},
		{"distinct aggregates of two lists", "select count(distinct user_id, status), count(distinct user_id) from orders" + splitWhere, "one statement per list"},
		{"sum distinct of a quotient", "select sum(distinct amount / 3) from orders" + splitWhere, "ROUND(amount / 3, n)"},
		{"aggregate of aggregate", "select max(count(*)) from orders" + splitWhere, "aggregate of an aggregate"},
		{"float literal over aggregates", "select sum(amount) / 1e3 from orders" + splitWhere, "select the aggregates themselves"},
		{"function over an aggregate", "select concat(max(amount), ' EUR') from orders" + splitWhere, "only +, -, *, /, unary minus and ROUND"},
		{"integer division over aggregates", "select sum(amount) div count(*) from orders" + splitWhere, "compute the expression in the application"},
		{"placeholder over aggregates", "select count(*) * ? from orders" + splitWhere, "cannot be computed exactly"},
		{"aggregate of a quotient in an expression", "select avg(amount / 3) * 2 from orders" + splitWhere, "ROUND(amount / 3, n)"},
		{"group by an expression over aggregates", "select sum(amount) + 1 from orders" + splitWhere + " group by 1", "names an aggregate"},
		{"group_concat", "select group_concat(id) from orders" + splitWhere, "use COUNT, SUM, MIN, MAX, AVG, BIT_AND, BIT_OR or BIT_XOR"},
		{"group by an aggregate not selected", "select count(*) from orders" + splitWhere + " group by count(*)", "names an aggregate"},
		{"select * with group by", "select * from orders" + splitWhere + " group by user_id", "select the grouped and aggregated columns instead of *"},
		{"select * and an aggregate", "select *, count(*) from orders" + splitWhere + " group by id", "value of any one row of its group"},
		{"select * with order by position", "select * from orders" + splitWhere + " order by 2", "name the column instead"},
		{"select distinct * of a derived table", "select distinct * from (select status from orders" + splitWhere + ") d", "name the columns instead of *"},
		{"select distinct * of a common table expression", "with d as (select status from orders" + splitWhere + ") select distinct * from d", "name the columns instead of *"},
		{"select distinct * ordered by a text column", "select distinct * from orders" + splitWhere + " order by status", "order by order_time only"},
		{"select distinct * ordered by an expression", "select distinct * from orders" + splitWhere + " order by order_time + 0", "order by columns"},
		{"select * and more with order by", "select *, amount * 2 as x from orders" + splitWhere + " order by x", "name the columns instead of *"},
		{"non-aggregated column", "select user_id, status, count(*) from orders" + splitWhere + " group by user_id", "neither aggregated nor in GROUP BY"},
		{"with rollup and order by", "select user_id, count(*) from orders" + splitWhere + " group by user_id with rollup order by 2", "drop the ORDER BY"},
		{"with rollup and having", "select user_id, count(*) from orders" + splitWhere + " group by user_id with rollup having count(*) > 1", "filter the rows in the application"},
		{"order by rand", "select id from orders" + splitWhere + " order by rand()", "RAND()"},
		{"distinct with hidden order", "select distinct status from orders" + splitWhere + " order by id", "DISTINCT with ORDER BY"},
		{"sql_calc_found_rows", "select sql_calc_found_rows id from orders" + splitWhere + " limit 3", "SQL_CALC_FOUND_ROWS"},
		{"having with placeholder", "select user_id, count(*) from orders" + splitWhere + " group by user_id having count(*) > ?", "placeholder"},
		{"having on non-group column", "select user_id, count(*) from orders" + splitWhere + " group by user_id having status = 1", "neither a selected column nor an aggregate"},
		{"order by non-group column", "select user_id, count(*) from orders" + splitWhere + " group by user_id order by status", "neither a group column nor an aggregate"},
		{"union", "select id from orders" + splitWhere + " union select id from users", "UNION"},
		{"intersect with itself", "select id from orders" + splitWhere + " intersect select id from orders where order_time >= '2025-03-02'", "INTERSECT"},
		{"order by position out of range", "select id from orders" + splitWhere + " order by 3", "position 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := splitPlan(t, c.sql)
			if !errors.Is(err, ErrNotMergeable) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%v\nwant ErrNotMergeable saying %q", err, c.says)
			}
		})
	}
}

// A statement that cannot be merged still runs when its range meets one table.
func TestNotMergeableSingleTable(t *testing.T) {
	f := standard(t)
	p, err := f.route("select id, row_number() over (order by id) from orders where order_time >= '2025-03-02'", nil, Input{})
	if err != nil || p.Merge != nil || len(p.Targets) != 1 {
		t.Errorf("%v %+v", err, p)
	}
}

// The statement that reads the collations of a split SELECT's weighed expressions is one
// aggregate row over one of its tables: MIN of each expression (an aggregate as it is),
// without GROUP BY, with a false clamp; and the types probe reads no row either: its clamp
// selects past the table's span (no condition the optimizer finds false, which would type the
// columns otherwise).
func TestTypesProbes(t *testing.T) {
	f := standard(t)
	p, err := f.route("select status, min(status) from orders"+splitWhere+" and user_id > ? group by status order by status", args(int64(3)), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.TypesUnknown() {
		t.Fatal("a first run must read the column types")
	}
	if _, ok := p.SignatureProbe([]merge.ColumnType{{DatabaseTypeName: "INT"}, {DatabaseTypeName: "INT"}}); ok {
		t.Error("a signature probe where no weighed column is text")
	}
	sig, ok := p.SignatureProbe(nil)
	want := "/* cold_query */ select " + strings.Join(merge.SignatureSQL(false), "min(`status`)") + ", " +
		strings.Join(merge.SignatureSQL(true), "min(`status`)") + " from orders_202412 where order_time >= '2024-12-01' and order_time < '2025-03-01' and user_id > ? and 1 = 0"
	if !ok || sig.SQL != want || len(sig.Args) != 1 || sig.Args[0].Value != int64(3) {
		t.Errorf("signature probe %v\n got %s %v\nwant %s", ok, sig.SQL, sig.Args, want)
	}
	types, ok := p.TypesProbe()
	if !ok || !strings.HasSuffix(types.SQL, " and orders_202412.order_time >= '2025-01-01 00:00:00' group by `status` order by 5 asc, 1 asc") || strings.Contains(types.SQL, "WEIGHT_STRING") {
		t.Errorf("types probe %v: %s", ok, types.SQL)
	}
	// Known types and collations: the sub-queries are rendered with the weights of text.
	p.Types.Store(nil, []merge.ColumnType{{DatabaseTypeName: "VARCHAR"}, {DatabaseTypeName: "VARCHAR"}}, [][]byte{[]byte("utf8mb4_general_ci 1\x04\x00 \x00 "), []byte("utf8mb4_general_ci 1\x04\x00 \x00 ")})
	if p, err = f.route("select status, min(status) from orders"+splitWhere+" and user_id > ? group by status order by status", args(int64(3)), Input{}); err != nil {
		t.Fatal(err)
	}
	if p.TypesUnknown() || len(p.Merge.Collations) < 2 || p.Merge.Collations[0] == nil || p.Merge.Collations[1] == nil {
		t.Errorf("with the types known: unknown %v, collations %q", p.TypesUnknown(), p.Merge.Collations)
	}
}

// The legs of a DISTINCT aggregate group by its argument after the statement's group keys;
// without GROUP BY they may then return no row, and the merge returns the aggregates over none.
func TestDistinctAggregateLegs(t *testing.T) {
	cases := []struct {
		sql, group string
		empty      bool
	}{
		{"select status, count(distinct user_id) from orders" + splitWhere + " group by status", " group by `status`, user_id", false},
		{"select avg(distinct amount), count(*) from orders" + splitWhere, " group by amount", true},
		{"select user_id, count(distinct status, amount) from orders" + splitWhere + " group by user_id", " group by user_id, `status`, amount", false},
	}
	for _, c := range cases {
		p, err := splitPlan(t, c.sql)
		if err != nil {
			t.Fatal(err)
		}
		if cold := p.Targets[0].SQL; !strings.Contains(cold, c.group) {
			t.Errorf("%s\ncold sub-query does not %q:\n%s", c.sql, c.group, cold)
		}
		if p.Merge.EmptyGroup != c.empty {
			t.Errorf("%s: EmptyGroup %v, want %v", c.sql, p.Merge.EmptyGroup, c.empty)
		}
	}
}

// The legs of GROUP BY … WITH ROLLUP group without ROLLUP, sorted by the group keys; the merge
// adds the subtotals.
func TestRollupLegs(t *testing.T) {
	p, err := splitPlan(t, "select status, user_id, count(*) from orders"+splitWhere+" group by status, user_id with rollup")
	if err != nil {
		t.Fatal(err)
	}
	cold := p.Targets[0].SQL
	if strings.Contains(strings.ToLower(cold), "rollup") || !strings.Contains(cold, " group by `status`, user_id order by 6 asc, 1 asc, 7 asc, 2 asc") {
		t.Errorf("cold sub-query:\n%s", cold)
	}
	if !p.Merge.Rollup || !p.Merge.StreamsGroups() {
		t.Errorf("merge %+v: want Rollup over groups streamed in key order", *p.Merge)
	}
}
