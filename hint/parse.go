package hint

import (
	"strconv"
	"strings"
)

// StatementStart returns the byte offset of the first token of sql after its
// leading whitespace and comments (block, optimizer-hint and line comments):
// where the statement's first keyword is. A MySQL executable comment
// (/*! … */, /*M! … */) and an unterminated comment count as statement text,
// so their offset is returned. It returns len(sql) when sql holds only
// whitespace and comments. It does not allocate.
func StatementStart(sql string) int {
	i := skipSpace(sql, 0)
	for i < len(sql) {
		end, _, ok := leadingComment(sql, i)
		if !ok {
			break
		}
		i = skipSpace(sql, end)
	}
	return i
}

// ParseLeading reads the hints written in the comments that lead sql (see the
// package doc for the forms) and returns them with rest: sql without the
// consumed hint comments and without leading whitespace. Comments that are not
// hints stay in rest unchanged. When sql has no hint comment, rest is a
// suffix of sql and nothing is allocated.
//
// A malformed, unknown or self-contradicting hint is an *Error wrapping
// ErrMalformedHint, ErrUnknownHint or ErrHintConflict; then hints is zero and
// rest is sql unchanged.
func ParseLeading(sql string) (hints Set, rest string, err error) {
	var p parser
	i := skipSpace(sql, 0)
	kept := i // start of the text not yet copied to rest
	var b strings.Builder
	for i < len(sql) {
		end, block, ok := leadingComment(sql, i)
		if !ok {
			break
		}
		next := skipSpace(sql, end)
		if block {
			consumed, err := p.comment(sql, i, end)
			if err != nil {
				return Set{}, sql, err
			}
			if consumed {
				if i > kept { // a kept comment precedes this hint: copy it
					if b.Len() == 0 {
						b.Grow(len(sql) - kept)
					}
					b.WriteString(sql[kept:i])
				}
				kept = next
			}
		}
		i = next
	}
	if b.Len() == 0 {
		return p.set, sql[kept:], nil
	}
	b.WriteString(sql[kept:])
	return p.set, b.String(), nil
}

// leadingComment reports whether a comment that does not belong to the
// statement text starts at sql[i]; if so, end is the offset just after it and
// block tells a /* */ comment from a line comment.
func leadingComment(sql string, i int) (end int, block, ok bool) {
	rest := sql[i:]
	switch {
	case strings.HasPrefix(rest, "/*"):
		if strings.HasPrefix(rest, "/*!") || strings.HasPrefix(rest, "/*M!") {
			return 0, false, false // executable comment: statement text
		}
		close := strings.Index(rest[2:], "*/")
		if close < 0 {
			return 0, false, false // unterminated: the server reports it
		}
		return i + 2 + close + 2, true, true
	case rest[0] == '#':
		return lineEnd(sql, i), false, true
	case strings.HasPrefix(rest, "--"):
		// MySQL: "--" starts a comment only when followed by whitespace, a
		// control character or the end of the text.
		if len(rest) == 2 || rest[2] <= ' ' || rest[2] == 0x7f {
			return lineEnd(sql, i), false, true
		}
	}
	return 0, false, false
}

func lineEnd(sql string, i int) int {
	nl := strings.IndexByte(sql[i:], '\n')
	if nl < 0 {
		return len(sql)
	}
	return i + nl + 1
}

func skipSpace(sql string, i int) int {
	for i < len(sql) && isSpace(sql[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// trim returns the span [s, e) of sql with surrounding whitespace removed.
func trim(sql string, s, e int) (int, int) {
	s = skipSpace(sql[:e], s)
	for e > s && isSpace(sql[e-1]) {
		e--
	}
	return s, e
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// field identifies one field of a Set, for conflict detection.
type field uint8

const (
	fieldShadow field = iota
	fieldColdQuery
	fieldLevel
	fieldBackend
	fieldCount
)

// parser accumulates the hints of one statement's comments.
type parser struct {
	set  Set
	seen [fieldCount]bool
	// value is each field's canonical value; first and firstAt are how and
	// where it was first written, for conflict messages.
	value   [fieldCount]string
	first   [fieldCount]string
	firstAt [fieldCount]int
}

// comment examines the block comment sql[start:end] and applies the hints it
// holds. consumed reports whether it was a hint comment.
func (p *parser) comment(sql string, start, end int) (consumed bool, err error) {
	bs, be := trim(sql, start+2, end-2)
	body := sql[bs:be]
	switch {
	case sql[start+2] == '+':
		return p.optimizerHint(sql, start, end)
	case strings.EqualFold(body, "shadow"):
		return true, p.apply(fieldShadow, "true", body, bs)
	case strings.EqualFold(body, "cold_query"):
		return true, p.apply(fieldColdQuery, "true", body, bs)
	case hasPrefixFold(body, "shardingsphere_hint"):
		colon := skipSpace(sql[:be], bs+len("shardingsphere_hint"))
		if colon >= be || sql[colon] != ':' {
			return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
				Fix: "write /* SHARDINGSPHERE_HINT: SHADOW=true */ with a colon after SHARDINGSPHERE_HINT"}
		}
		return true, p.items(sql, colon+1, be, formShardingSphere)
	case looksLikeBareHint(body, "shadow"), looksLikeBareHint(body, "cold_query"):
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "a bare hint comment holds only its keyword, e.g. /* shadow */; " +
				"to give a value write /*+ OBROUTE(shadow=false) */"}
	}
	return false, nil
}

// looksLikeBareHint reports whether body is keyword followed by ':' or '=',
// a misspelt hint that must not be ignored.
func looksLikeBareHint(body, keyword string) bool {
	if !hasPrefixFold(body, keyword) {
		return false
	}
	i := skipSpace(body, len(keyword))
	return i < len(body) && (body[i] == ':' || body[i] == '=')
}

// optimizerHint handles /*+ … */: OBROUTE(...) is ours, anything else is the
// server's.
func (p *parser) optimizerHint(sql string, start, end int) (bool, error) {
	bs, be := trim(sql, start+3, end-2)
	body := sql[bs:be]
	// OBROUTE must open the comment and be a whole word (OBROUTER is not ours).
	ours := hasPrefixFold(body, "obroute") && !(len(body) > len("obroute") && isWordByte(body[len("obroute")]))
	if !ours {
		if containsFold(body, "obroute(") {
			return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
				Fix: "OBROUTE(...) must be alone in its own /*+ */ comment; " +
					"move the other optimizer hints to a separate /*+ */ comment"}
		}
		return false, nil
	}
	open := skipSpace(sql[:be], bs+len("obroute"))
	if open >= be || sql[open] != '(' {
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "write OBROUTE(key=value, ...), e.g. /*+ OBROUTE(shadow=true) */"}
	}
	close := strings.IndexByte(sql[open:be], ')')
	if close < 0 {
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "OBROUTE( has no closing parenthesis; write /*+ OBROUTE(shadow=true) */"}
	}
	close += open
	if skipSpace(sql[:be], close+1) != be {
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "OBROUTE(...) must be alone in its own /*+ */ comment; " +
				"move the other optimizer hints to a separate /*+ */ comment"}
	}
	return true, p.items(sql, open+1, close, formOBROUTE)
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// containsFold reports whether s contains substr ignoring ASCII case.
func containsFold(s, substr string) bool {
	for i := 0; i+len(substr) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(substr)], substr) {
			return true
		}
	}
	return false
}

// form is the syntax a key=value list is written in.
type form uint8

const (
	formOBROUTE form = iota
	formShardingSphere
)

// items applies the comma-separated key=value list sql[from:to].
func (p *parser) items(sql string, from, to int, f form) error {
	for {
		itemEnd := to
		if comma := strings.IndexByte(sql[from:to], ','); comma >= 0 {
			itemEnd = from + comma
		}
		s, e := trim(sql, from, itemEnd)
		if s == e {
			return &Error{Err: ErrMalformedHint, Hint: sql[from:to], Offset: from,
				Fix: "empty item: write key=value pairs separated by single commas, e.g. " + f.example()}
		}
		eq := strings.IndexByte(sql[s:e], '=')
		if eq < 0 {
			return &Error{Err: ErrMalformedHint, Hint: sql[s:e], Offset: s,
				Fix: "write key=value, e.g. " + f.example()}
		}
		ks, ke := trim(sql, s, s+eq)
		vs, ve := trim(sql, s+eq+1, e)
		if err := p.item(f, sql[ks:ke], sql[vs:ve], sql[s:e], s); err != nil {
			return err
		}
		if itemEnd == to {
			return nil
		}
		from = itemEnd + 1
	}
}

func (f form) example() string {
	if f == formShardingSphere {
		return "/* SHARDINGSPHERE_HINT: SHADOW=true, DATA_SOURCE_NAME=ds_1 */"
	}
	return "/*+ OBROUTE(shadow=true, query_level=L2) */"
}

// item applies one key=value; text is the item as written, at offset at.
func (p *parser) item(f form, key, value, text string, at int) error {
	if f == formShardingSphere {
		switch {
		case strings.EqualFold(key, "SHADOW"):
			return p.boolItem(fieldShadow, value, text, at, "SHADOW")
		case strings.EqualFold(key, "DATA_SOURCE_NAME"):
			return p.backendItem(value, text, at)
		}
		return &Error{Err: ErrUnknownHint, Hint: text, Offset: at,
			Fix: "obroute does not support ShardingSphere hint key " + key +
				"; it supports SHADOW and DATA_SOURCE_NAME: remove the key"}
	}
	switch strings.ToLower(key) {
	case "shadow":
		return p.boolItem(fieldShadow, value, text, at, "shadow")
	case "cold_query":
		return p.boolItem(fieldColdQuery, value, text, at, "cold_query")
	case "query_level":
		l, err := ParseLevel(value)
		if err != nil {
			return &Error{Err: ErrMalformedHint, Hint: text, Offset: at,
				Fix: "query_level takes L1, L2 or L3, e.g. OBROUTE(query_level=L2)"}
		}
		return p.apply(fieldLevel, l.String(), text, at)
	case "backend":
		return p.backendItem(value, text, at)
	}
	return &Error{Err: ErrUnknownHint, Hint: text, Offset: at,
		Fix: "unknown OBROUTE key " + strconv.Quote(key) + "; the keys are shadow, cold_query, query_level and backend"}
}

func (p *parser) boolItem(fl field, value, text string, at int, key string) error {
	switch {
	case strings.EqualFold(value, "true"):
		return p.apply(fl, "true", text, at)
	case strings.EqualFold(value, "false"):
		return p.apply(fl, "false", text, at)
	}
	return &Error{Err: ErrMalformedHint, Hint: text, Offset: at,
		Fix: key + " takes true or false, e.g. " + key + "=true"}
}

func (p *parser) backendItem(value, text string, at int) error {
	if value == "" || strings.ContainsAny(value, " \t\r\n\f\v'\"`()=,") {
		return &Error{Err: ErrMalformedHint, Hint: text, Offset: at,
			Fix: "a backend is named without quotes, spaces or parentheses, e.g. backend=cold-replica"}
	}
	return p.apply(fieldBackend, value, text, at)
}

// apply records field fl = value, value being canonical text ("true" or
// "false", "L2", a backend name); text is the hint as written, at offset at.
// The same field with a different value is a conflict.
func (p *parser) apply(fl field, value, text string, at int) error {
	if p.seen[fl] {
		if p.value[fl] == value {
			return nil
		}
		return &Error{Err: ErrHintConflict, Hint: text, Offset: at,
			Fix: "it contradicts " + strconv.Quote(p.first[fl]) + " at byte " + strconv.Itoa(p.firstAt[fl]) +
				"; give each hint once per statement"}
	}
	p.seen[fl], p.value[fl], p.first[fl], p.firstAt[fl] = true, value, text, at
	switch fl {
	case fieldShadow:
		p.set.Shadow = ShadowOff
		if value == "true" {
			p.set.Shadow = ShadowOn
		}
	case fieldColdQuery:
		p.set.ColdQuery = value == "true"
	case fieldLevel:
		p.set.Level, _ = ParseLevel(value)
	case fieldBackend:
		p.set.Backend = value
	}
	return nil
}
