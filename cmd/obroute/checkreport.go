package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// checkReport is what `obroute check` prints: as text, or as JSON with -json.
type checkReport struct {
	Input checkInput `json:"input"`
	// Classes counts statements and templates by class, in classOrder; a template whose
	// statements have several classes counts in each.
	Classes []classCount `json:"classes"`
	// Refusals counts the refused statements by reason, the most frequent first.
	Refusals []classCount `json:"refusals"`
	// Templates are the templates, the most frequent first (all of them in JSON).
	Templates []templateRow `json:"templates"`
}

// checkInput describes what was read.
type checkInput struct {
	Format         string `json:"format"` // general_log, slow_log, statements or digests
	Source         string `json:"source"`
	Bytes          int64  `json:"bytes,omitempty"`
	Statements     int64  `json:"statements"`
	ClientSessions int64  `json:"client_sessions"`
	Templates      int    `json:"templates"`
	// OtherUsers counts the statements of client sessions left out by -user.
	OtherUsers int64 `json:"other_users_statements,omitempty"`
	// SessionsBeforeLog counts the connections of a general log whose Connect line is not in
	// it: they began before the log, and what they did then (a transaction open, SET, a
	// temporary table, a PREPARE) is not known; their statements are routed as those of a
	// new client session. SessionsBeforeLogIDs are the first 20 of their connection ids.
	SessionsBeforeLog    int64    `json:"sessions_before_log,omitempty"`
	SessionsBeforeLogIDs []uint64 `json:"sessions_before_log_ids,omitempty"`
	// Unclear counts the statements of a log whose text's end the log does not fix (a string
	// or comment left open in it: an unbalanced quote, or a sql_mode check does not know);
	// UnclearStatements are the first 20, in input order. Such a statement may hold other
	// statements of the log (then missing from the report), or be cut short.
	Unclear           int64        `json:"unclear_statements,omitempty"`
	UnclearStatements []unclearRow `json:"unclear,omitempty"`
	// SplitSelects counts the split statements that return rows (a SELECT …): routed as a
	// Query, whose rows obroute merges; run with Exec (database/sql allows it), obroute
	// refuses them (cross_backend), and the log does not say which the application used.
	SplitSelects int64 `json:"split_select_statements,omitempty"`
	// DriverSets counts the SET statements of session variables that open a general log's
	// client sessions, as a driver sends its DSN's session parameters (go-sql-driver: SET
	// time_zone = '+08:00'): if the
	// application's driver sent them, obroute sends them from its backends' DSNs instead and
	// routes no such statement; check counts them (forced), as the log holds them.
	DriverSets int64 `json:"driver_set_statements,omitempty"`
	// ClosedIdle counts client sessions closed to stay within -max-sessions.
	ClosedIdle int64 `json:"closed_idle_sessions,omitempty"`
	// Ignored counts a general log's commands that are not statements, by command.
	Ignored map[string]int64 `json:"ignored_commands,omitempty"`
	// OtherTemplates counts the statements of templates past -max-templates, in the summary
	// but not in the table.
	OtherTemplates int64   `json:"other_templates_statements,omitempty"`
	Seconds        float64 `json:"seconds"`
}

// unclearRow is a statement whose text's end the log does not fix.
type unclearRow struct {
	Seq        uint64 `json:"seq"` // its position among the log's statements and connections
	Connection uint64 `json:"connection"`
	Statement  string `json:"statement"` // its first 100 characters, on one line
	Why        string `json:"why"`
}

// shortText is a statement's first 100 characters, on one line.
func shortText(s string) string { return oneLine(s, false) }

// classCount is one line of the summary.
type classCount struct {
	Class      string `json:"class,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Statements int64  `json:"statements"`
	Templates  int    `json:"templates"`
}

// templateRow is one template and how its statements were routed.
type templateRow struct {
	Template string       `json:"template"`
	Count    int64        `json:"count"`
	Outcomes []outcomeRow `json:"outcomes"`
}

// templateJSON is a templateRow as JSON: a template that is not UTF-8 (a latin1 string or
// comment) also as base64 in template_base64, its exact bytes, since a JSON string writes
// each byte that is not UTF-8 as U+FFFD.
type templateJSON struct {
	Template       string       `json:"template"`
	TemplateBase64 []byte       `json:"template_base64,omitempty"`
	Count          int64        `json:"count"`
	Outcomes       []outcomeRow `json:"outcomes"`
}

// MarshalJSON writes the row, its template's bytes in template_base64 when it is not UTF-8.
func (t templateRow) MarshalJSON() ([]byte, error) {
	j := templateJSON{Template: t.Template, Count: t.Count, Outcomes: t.Outcomes}
	if !utf8.ValidString(t.Template) {
		j.TemplateBase64 = []byte(t.Template)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as writeJSON: a template's < and & as they are
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// UnmarshalJSON reads a row MarshalJSON wrote.
func (t *templateRow) UnmarshalJSON(b []byte) error {
	var j templateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = templateRow{Template: j.Template, Count: j.Count, Outcomes: j.Outcomes}
	if j.TemplateBase64 != nil {
		t.Template = string(j.TemplateBase64)
	}
	return nil
}

// outcomeRow is the statements of a template with one outcome.
type outcomeRow struct {
	Class    string   `json:"class"`
	Count    int64    `json:"count"`
	Rule     string   `json:"route_info_type,omitempty"`
	Backends []string `json:"backends,omitempty"`
	Level    string   `json:"query_level,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	// Error is the refusal of the template's first refused statement; Rewrite its advice,
	// the part after its last "; ".
	Error   string `json:"error,omitempty"`
	Rewrite string `json:"rewrite,omitempty"`
	// RoutedClass is, for a statement refused once routed (the first statement of a
	// transaction on two backends …), the class the connector's Stats counts it in.
	RoutedClass string `json:"routed_class,omitempty"`
}

// classOrder is the order of the summary's classes.
var classOrder = []string{"default", classStatic, "forced", "cached", "hot_only", "split", "cold_only", "shadow",
	classSession, classServerError, classUnknown, classNeedsValues, classArgTypes, classTruncated, classRefused}

// classNotes explain the classes in the text summary.
var classNotes = map[string]string{
	"default":        "the default backend",
	classStatic:      "a static table route",
	"forced":         "transaction, temporary table, previous statement's session, backend hint, SET/USE",
	"cached":         "route not computable: the last backend used, or the default one",
	"hot_only":       "time-sharded, hot tables only",
	"split":          "time-sharded, split across hot and history, rows merged",
	"cold_only":      "time-sharded, history store only",
	"shadow":         "shadow traffic",
	classSession:     "BEGIN, COMMIT, ROLLBACK, SET TRANSACTION: kept by obroute, not routed",
	classServerError: "the workload's server rejected it (the log's Errno): not run, not routed",
	classUnknown:     "after a SET of a value only a server computes: the session's state is unknown",
	classNeedsValues: "the route depends on the values the digest replaced by ?",
	classTruncated:   "digest text cut short by performance_schema_max_digest_length",
	classArgTypes:    "the route depends on argument types the log's Execute line does not keep",
	classRefused:     "refused by obroute",
}

// buildReport merges the workers' counts.
func buildReport(in checkInput, workers []*worker, elapsed time.Duration) checkReport {
	merged := map[string]*templateStats{}
	for _, w := range workers {
		in.OtherUsers += w.skipped
		in.ClosedIdle += w.evicted
		in.ClientSessions += w.clients
		in.SessionsBeforeLog += w.beforeLog
		in.SessionsBeforeLogIDs = append(in.SessionsBeforeLogIDs, w.beforeLogIDs...)
		in.Unclear += w.unclear
		in.DriverSets += w.driverSets
		in.UnclearStatements = append(in.UnclearStatements, w.unclearRows...)
		for key, t := range w.templates {
			m := merged[key]
			if m == nil {
				merged[key] = t
				continue
			}
			for _, o := range t.outcomes {
				m.add(o.outcome, o.count, o.seq, o.err)
			}
		}
	}
	slices.Sort(in.SessionsBeforeLogIDs)
	in.SessionsBeforeLogIDs = in.SessionsBeforeLogIDs[:min(len(in.SessionsBeforeLogIDs), maxListedSessions)]
	slices.SortFunc(in.UnclearStatements, func(a, b unclearRow) int { return cmp.Compare(a.Seq, b.Seq) })
	in.UnclearStatements = in.UnclearStatements[:min(len(in.UnclearStatements), maxListedSessions)]
	r := checkReport{Input: in}
	classes := map[string]*classCount{}
	reasons := map[string]*classCount{}
	count := func(m map[string]*classCount, c classCount, n int64) {
		s := m[c.Class+c.Reason]
		if s == nil {
			s = &c
			m[c.Class+c.Reason] = s
		}
		s.Statements += n
		s.Templates++
	}
	for key, t := range merged {
		slices.SortFunc(t.outcomes, func(a, b *outcomeStats) int {
			return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.seq, b.seq))
		})
		r.Input.Statements += t.count
		seen := map[string]bool{}
		for _, o := range t.outcomes {
			if !seen[o.class] {
				seen[o.class] = true
				count(classes, classCount{Class: o.class}, 0)
			}
			classes[o.class].Statements += o.count
			if o.class == classRefused {
				if !seen["reason:"+o.reason] {
					seen["reason:"+o.reason] = true
					count(reasons, classCount{Reason: o.reason}, 0)
				}
				reasons[o.reason].Statements += o.count
			}
		}
		if key == otherTemplates {
			r.Input.OtherTemplates = t.count
			continue
		}
		row := templateRow{Template: key, Count: t.count}
		for _, o := range t.outcomes {
			if o.class == "split" && !returnsNoRows(key) {
				r.Input.SplitSelects += o.count
			}
			or := outcomeRow{Class: o.class, Count: o.count, Rule: o.rule, Level: o.level, Reason: o.reason, RoutedClass: o.routed}
			if o.backends != "" {
				or.Backends = strings.Split(o.backends, ",")
			}
			if o.err != "" {
				or.Error, or.Rewrite = o.err, rewriteOf(o.err)
			}
			row.Outcomes = append(row.Outcomes, or)
		}
		r.Templates = append(r.Templates, row)
	}
	r.Input.Templates = len(r.Templates)
	for _, c := range classOrder {
		if s := classes[c]; s != nil {
			r.Classes = append(r.Classes, *s)
		}
	}
	for _, s := range reasons {
		r.Refusals = append(r.Refusals, *s)
	}
	slices.SortFunc(r.Refusals, func(a, b classCount) int {
		return cmp.Or(cmp.Compare(b.Statements, a.Statements), cmp.Compare(a.Reason, b.Reason))
	})
	slices.SortFunc(r.Templates, func(a, b templateRow) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Template, b.Template))
	})
	r.Input.Seconds = elapsed.Seconds()
	return r
}

// rewriteOf is the advice of a refusal: obroute's refusals say what is wrong, then after "; "
// how to rewrite the statement.
func rewriteOf(msg string) string {
	if i := strings.LastIndex(msg, "; "); i >= 0 {
		return msg[i+2:]
	}
	return ""
}

// refused returns the refused statements and templates.
func (r *checkReport) refused() (statements int64, templates int) {
	for _, c := range r.Classes {
		if c.Class == classRefused {
			return c.Statements, c.Templates
		}
	}
	return 0, 0
}

// undecidedClasses are the classes of statements whose route check cannot tell.
var undecidedClasses = map[string]bool{classUnknown: true, classNeedsValues: true, classTruncated: true, classArgTypes: true}

// undecided returns the statements and templates whose route check cannot tell: unknown,
// needs_values, truncated, arg_types.
func (r *checkReport) undecided() (statements int64, templates int) {
	for _, c := range r.Classes {
		if undecidedClasses[c.Class] {
			statements, templates = statements+c.Statements, templates+c.Templates
		}
	}
	return statements, templates
}

// verdict is the sentence that ends a report whose exit status is 1: the statements that would
// be refused, those whose route check cannot tell, and those whose end the log does not fix;
// "" when there are none.
func (r *checkReport) verdict() string {
	var parts []string
	if n, k := r.refused(); n > 0 {
		parts = append(parts, fmt.Sprintf("%s statement(s) of %s template(s) would be refused", group(n), group(int64(k))))
	}
	if n, k := r.undecided(); n > 0 {
		parts = append(parts, fmt.Sprintf("%s statement(s) of %s template(s) cannot be decided without a server (unknown, needs_values, arg_types, truncated)", group(n), group(int64(k))))
	}
	if n := r.Input.Unclear; n > 0 {
		parts = append(parts, fmt.Sprintf("%s statement(s) of the log have an end the log does not fix (listed above): the statements they may hold are not checked", group(n)))
	}
	return strings.Join(parts, "; ")
}

// writeJSON writes the report as indented JSON.
func (r *checkReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// formatNames are the input formats as the text report names them.
var formatNames = map[string]string{"general_log": "general log", "slow_log": "slow log", "statements": "statements file", "digests": "statement digests"}

// writeText writes the report for a person: the summary by class, then the top templates
// (all with top 0), each template shortened to one line of at most 100 characters unless wide.
func (r *checkReport) writeText(w io.Writer, top int, wide bool) error {
	var b strings.Builder
	in := r.Input
	fmt.Fprintf(&b, "obroute check: %s %s\n", formatNames[in.Format], in.Source)
	fmt.Fprintf(&b, "  %s statement(s) in %s client session(s), %s template(s)", group(in.Statements), group(in.ClientSessions), group(int64(in.Templates)))
	if in.Bytes > 0 {
		fmt.Fprintf(&b, " (%s read in %.1f s)", sizeText(in.Bytes), in.Seconds)
	}
	b.WriteString("\n")
	if in.Format == "slow_log" {
		b.WriteString("  a slow log writes each statement of a text of several (multiStatements) as an entry of its own: routed here one by one, where obroute routes the text as one (a general log holds it whole)\n")
	}
	if in.OtherUsers > 0 {
		fmt.Fprintf(&b, "  %s statement(s) left out by -user (of other users, or of client sessions whose Connect is not in the log)\n", group(in.OtherUsers))
	}
	if in.SessionsBeforeLog > 0 {
		fmt.Fprintf(&b, "  %s client session(s) began before the log (no Connect line: connection %s): what they did before it (a transaction, SET, a temporary table, PREPARE) is not known; their statements are routed as a new client session's and may route otherwise\n",
			group(in.SessionsBeforeLog), idList(in.SessionsBeforeLogIDs, in.SessionsBeforeLog))
	}
	if in.DriverSets > 0 {
		fmt.Fprintf(&b, "  %s SET statement(s) open their client sessions, as a driver sends its DSN's session parameters: if the application's driver sent them, obroute sends them from its backends' DSNs and routes no such statement\n", group(in.DriverSets))
	}
	if in.Unclear > 0 {
		fmt.Fprintf(&b, "  %s statement(s) whose end the log does not fix: each may hold other statements of the log (then missing here) or be cut short\n", group(in.Unclear))
		for _, u := range in.UnclearStatements {
			fmt.Fprintf(&b, "    statement %d of connection %d: %s\n      %s\n", u.Seq, u.Connection, u.Statement, u.Why)
		}
		if int64(len(in.UnclearStatements)) < in.Unclear {
			b.WriteString("    … (the first 20 listed)\n")
		}
	}
	if len(in.Ignored) > 0 {
		names := make([]string, 0, len(in.Ignored))
		var n int64
		for c, k := range in.Ignored {
			names = append(names, c)
			n += k
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, c := range names {
			parts[i] = fmt.Sprintf("%s %s", c, group(in.Ignored[c]))
		}
		fmt.Fprintf(&b, "  %s commands that are not statements ignored (%s)\n", group(n), strings.Join(parts, ", "))
	}
	if in.ClosedIdle > 0 {
		fmt.Fprintf(&b, "  %s idle client sessions closed to stay within -max-sessions: their later statements ran on new client sessions\n", group(in.ClosedIdle))
	}
	if in.OtherTemplates > 0 {
		fmt.Fprintf(&b, "  %s statements of templates past -max-templates are in the summary only\n", group(in.OtherTemplates))
	}
	fmt.Fprintf(&b, "\n%-22s %12s %7s %10s\n", "class", "statements", "%", "templates")
	for _, c := range r.Classes {
		fmt.Fprintf(&b, "%-22s %12s %6.1f%% %10s   %s\n", c.Class, group(c.Statements), percent(c.Statements, in.Statements), group(int64(c.Templates)), classNotes[c.Class])
		if c.Class == classRefused {
			for _, rc := range r.Refusals {
				fmt.Fprintf(&b, "  %-20s %12s %7s %10s\n", rc.Reason, group(rc.Statements), "", group(int64(rc.Templates)))
			}
		}
	}
	shown := r.Templates
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	if len(shown) > 0 {
		fmt.Fprintf(&b, "\ntemplates by frequency")
		if len(shown) < len(r.Templates) {
			fmt.Fprintf(&b, " (the first %d of %d; -top 0 shows all)", len(shown), len(r.Templates))
		}
		fmt.Fprintf(&b, "\n%10s  %-12s %-16s %-5s  %s\n", "count", "class", "backends", "level", "template")
	}
	for _, t := range shown {
		text := oneLine(t.Template, wide)
		for _, o := range t.Outcomes {
			backends, level := strings.Join(o.Backends, ","), o.Level
			if backends == "" {
				backends = "-"
			}
			if level == "" {
				level = "-"
			}
			fmt.Fprintf(&b, "%10s  %-12s %-16s %-5s  %s\n", group(o.Count), o.Class, backends, level, text)
			if o.Class == classRefused {
				advice := o.Rewrite
				if advice == "" {
					advice = o.Error
				}
				fmt.Fprintf(&b, "%10s  %s: %s\n", "", o.Reason, advice)
			}
		}
	}
	if v := r.verdict(); v != "" {
		fmt.Fprintf(&b, "\n%s.\n", v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// idList writes connection ids, "…" after them when they are the first of n.
func idList(ids []uint64, n int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(id, 10)
	}
	s := strings.Join(parts, ", ")
	if int64(len(ids)) < n {
		s += ", …"
	}
	return s
}

// oneLine writes a template on one line, shortened to 100 characters unless wide.
func oneLine(s string, wide bool) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); !wide && len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

func percent(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// group writes n with a space between groups of three digits: 1 234 567.
func group(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// sizeText writes a byte count in KiB, MiB or GiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
