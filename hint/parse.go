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
// consumed hints and without leading whitespace. A hint comment is removed with
// the whitespace after it; an OBROUTE(...) among other optimizer hints is
// removed from its /*+ */ comment, which keeps the others for the server.
// Comments that are not hints stay in rest unchanged. When sql has no hint, or
// its hints lead it, rest is a suffix of sql and nothing is allocated.
//
// A malformed, unknown or self-contradicting hint is an *Error wrapping
// ErrMalformedHint, ErrUnknownHint or ErrHintConflict; so is a comment that
// names a hint and cannot be read, a hint comment right after the
// statement's first word (where MariaDB reads optimizer hints, and obroute
// reads none), and any comment further into the statement that names a hint
// (see hintInText). Then hints is zero and rest is sql unchanged.
func ParseLeading(sql string) (hints Set, rest string, err error) {
	hints, rest, err = parseLeading(sql)
	if err != nil {
		return hints, rest, err
	}
	if err := unicodeSpelling(sql, hints); err != nil {
		return Set{}, sql, err
	}
	return hints, rest, nil
}

// foldToASCII returns s with the letters that Unicode case mapping (Go's strings.EqualFold,
// Java's toUpperCase) takes to the ASCII letters of a hint word replaced by those: ſ (U+017F)
// by s, the Kelvin sign (U+212A) by k, ı (U+0131) and İ (U+0130) by i.
func foldToASCII(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '\u017f':
			c = 's'
		case '\u212a':
			c = 'k'
		case '\u0131', '\u0130':
			c = 'i'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// unicodeSpelling refuses sql when a hint word in it is spelled with a letter that only
// Unicode case mapping takes to the word's (/* ſhadow */, /* ſHARDINGSPHERE_HINT: … */):
// read with those letters mapped to ASCII, its hints (or its refusal) differ from what obroute
// reads in ASCII. obroute reads hint words in ASCII only; such a spelling must not run as
// the other traffic.
func unicodeSpelling(sql string, hints Set) error {
	if !strings.ContainsAny(sql, "\u017f\u212a\u0131\u0130") {
		return nil
	}
	folded, _, err := parseLeading(foldToASCII(sql))
	if err == nil && folded == hints {
		return nil
	}
	at := strings.IndexAny(sql, "\u017f\u212a\u0131\u0130")
	from, to := strings.LastIndex(sql[:at], "/*"), len(sql)
	if from < 0 {
		from = at
	}
	if e := strings.Index(sql[at:], "*/"); e >= 0 {
		to = at + e + 2
	}
	return &Error{Err: ErrMalformedHint, Hint: sql[from:to], Offset: from,
		Fix: "a comment spells a hint word with a letter outside ASCII (ſ, the Kelvin sign K, ı or İ) that case folding reads as an ASCII letter; obroute reads hint words in ASCII only: write the word in ASCII letters"}
}

func parseLeading(sql string) (hints Set, rest string, err error) {
	p := parser{kept: skipSpace(sql, 0)}
	i := p.kept
	for i < len(sql) {
		end, block, ok := leadingComment(sql, i)
		if !ok {
			break
		}
		next := skipSpace(sql, end)
		if block {
			_, err = p.comment(sql, i, end, next)
		} else {
			err = lineComment(sql, i, end)
		}
		if err != nil {
			return Set{}, sql, err
		}
		i = next
	}
	if err := hintAfterFirstWord(sql, i); err != nil {
		return Set{}, sql, err
	}
	if err := hintInText(sql, i); err != nil {
		return Set{}, sql, err
	}
	if p.b.Len() == 0 {
		return p.set, sql[p.kept:], nil
	}
	p.b.WriteString(sql[p.kept:])
	return p.set, p.b.String(), nil
}

// cut removes sql[from:to] from rest. Cuts come in increasing order; a cut
// where rest begins moves its start, any other copies the text before it.
func (p *parser) cut(sql string, from, to int) {
	if from > p.kept {
		if p.b.Len() == 0 {
			p.b.Grow(len(sql) - p.kept)
		}
		p.b.WriteString(sql[p.kept:from])
	}
	p.kept = to
}

// lineComment refuses a leading line comment (-- …, # …) that names a hint:
// hints are read from block comments only, and one written in a line comment
// must not be silently lost.
func lineComment(sql string, start, end int) error {
	from := start + 1
	if sql[start] == '-' {
		from = start + 2
	}
	s, e := trim(sql, from, end)
	if lineNamesHint(sql[s:e]) {
		return &Error{Err: ErrMalformedHint, Hint: sql[s:e], Offset: s,
			Fix: "a line comment (-- or #) never carries a hint; write the hint in a block comment before the statement, e.g. /* shadow */ or /*+ OBROUTE(shadow=true) */"}
	}
	return nil
}

// lineNamesHint reports whether the text of a line comment names a hint: at
// its start (see namesHint), or in a block comment written inside it
// (-- note /* shadow */), which the server reads as part of the line comment.
func lineNamesHint(text string) bool {
	if namesHint(text) {
		return true
	}
	for i := strings.Index(text, "/*"); i >= 0; i = strings.Index(text, "/*") {
		text = text[i+2:]
		body := text
		if e := strings.Index(body, "*/"); e >= 0 {
			body = body[:e]
		}
		if namesHint(body) {
			return true
		}
	}
	return false
}

// namesHint reports whether text looks like a hint of obroute's: it names
// OBROUTE or SHARDINGSPHERE_HINT, or holds the word shadow or cold_query
// anywhere, whatever punctuation, control characters or other bytes stand
// before or around it (/** shadow */, /*\x01shadow*/, -- /* shadow */ and
// /* note: shadow */ name the hint too; /* shadowed rows */ does not).
func namesHint(text string) bool {
	return namesOurs(text) || holdsWord(text, "shadow") || holdsWord(text, "cold_query")
}

// holdsWord reports whether text holds word (ASCII, any case) as a whole word:
// not preceded or followed by an ASCII letter, digit, _ or $.
func holdsWord(text, word string) bool {
	for i := 0; i+len(word) <= len(text); i++ {
		if asciiEqualFold(text[i:i+len(word)], word) &&
			(i == 0 || !asciiWordByte(text[i-1])) && (i+len(word) == len(text) || !asciiWordByte(text[i+len(word)])) {
			return true
		}
	}
	return false
}

func asciiWordByte(c byte) bool { return isWordByte(c) && c < 0x80 }

// namesOurs reports whether text names OBROUTE or SHARDINGSPHERE_HINT.
func namesOurs(text string) bool {
	return containsFold(text, "obroute") || containsFold(text, "shardingsphere_hint") || containsFold(text, "shardingsphere hint")
}

// wordStart returns the offset of the first ASCII letter, digit, _ or $ of s,
// len(s) when it has none.
func wordStart(s string) int {
	i := 0
	for i < len(s) && !(isWordByte(s[i]) && s[i] < 0x80) {
		i++
	}
	return i
}

// mentionsHint reports whether text names OBROUTE, ShardingSphere or a bare
// hint's keyword anywhere.
func mentionsHint(text string) bool {
	return containsFold(text, "obroute") || containsFold(text, "shardingsphere") || containsFold(text, "shadow") || containsFold(text, "cold_query")
}

// firstWord returns the leading word of s (letters, digits, _, $).
func firstWord(s string) string {
	i := 0
	for i < len(s) && isWordByte(s[i]) && s[i] < 0x80 {
		i++
	}
	return s[:i]
}

// hintAfterFirstWord refuses a hint comment right after the statement's first
// word (SELECT /*+ OBROUTE(shadow=true) */ …): MariaDB reads optimizer hints
// there, a reader may expect obroute to as well, and obroute reads hints only
// before the first word. start is where the statement's first word begins.
func hintAfterFirstWord(sql string, start int) error {
	i := start
	for i < len(sql) && isWordByte(sql[i]) {
		i++
	}
	if i == start {
		return nil
	}
	c := skipSpace(sql, i)
	if c == len(sql) {
		return nil
	}
	end, block, ok := leadingComment(sql, c)
	if !ok || !block {
		return nil
	}
	var q parser
	if found, err := q.comment(sql, c, end, end); err != nil || found {
		s, e := trim(sql, c, end)
		return &Error{Err: ErrMalformedHint, Hint: sql[s:e], Offset: s,
			Fix: "obroute reads hints only in the comments before the statement's first word; move this comment before " +
				strings.ToUpper(sql[start:i])}
	}
	return nil
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

// lineEnd returns where the line comment that starts at sql[i] ends: after the
// next newline, or at the next NUL byte, which ends a line comment in MariaDB
// too (and is then statement text: the server refuses it).
func lineEnd(sql string, i int) int {
	for j := i; j < len(sql); j++ {
		switch sql[j] {
		case '\n':
			return j + 1
		case 0:
			return j
		}
	}
	return len(sql)
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
	return len(s) >= len(prefix) && asciiEqualFold(s[:len(prefix)], prefix)
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

// parser accumulates the hints of one statement's comments and what rest
// keeps of it.
type parser struct {
	set  Set
	seen [fieldCount]bool
	// value is each field's canonical value; first and firstAt are how and
	// where it was first written, for conflict messages.
	value   [fieldCount]string
	first   [fieldCount]string
	firstAt [fieldCount]int
	// kept is where the text not yet copied to rest starts; b holds rest
	// once a kept comment precedes a hint.
	kept int
	b    strings.Builder
}

// comment examines the block comment sql[start:end], next being where the
// text after it (and its whitespace) starts, applies the hints it holds and
// cuts them from rest. found reports whether it held a hint.
func (p *parser) comment(sql string, start, end, next int) (found bool, err error) {
	if sql[start+2] == '+' {
		return p.optimizerHints(sql, start, end, next)
	}
	bs, be := trim(sql, start+2, end-2)
	body := sql[bs:be]
	lead := wordStart(body)
	word := firstWord(body[lead:])
	switch {
	case asciiEqualFold(body, "shadow"):
		err = p.apply(fieldShadow, "true", body, bs)
	case asciiEqualFold(body, "cold_query"):
		err = p.apply(fieldColdQuery, "true", body, bs)
	case hasPrefixFold(body, "shardingsphere_hint"), hasPrefixFold(body, "shardingsphere hint"):
		colon := skipSpace(sql[:be], bs+len("shardingsphere_hint"))
		if colon >= be || sql[colon] != ':' {
			return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
				Fix: "write /* SHARDINGSPHERE_HINT: SHADOW=true */ with a colon after SHARDINGSPHERE_HINT"}
		}
		err = p.items(sql, colon+1, be, formShardingSphere)
	case lead > 0 && (asciiEqualFold(word, "shadow") || asciiEqualFold(word, "cold_query")):
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "the comment holds " + strconv.Quote(body[:lead]) + " before " + strings.ToLower(word) + " (a comment opened with /**, punctuation or a control character), so it is not read as a hint; write /* " +
				strings.ToLower(word) + " */ with only spaces around the word"}
	case asciiEqualFold(word, "shadow"), asciiEqualFold(word, "cold_query"):
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "a comment whose first word is " + strings.ToLower(word) + " is read as a hint and must hold only that word, e.g. /* " +
				strings.ToLower(word) + " */; to give a value write /*+ OBROUTE(" + strings.ToLower(word) + "=false) */, and move a note to a comment of its own"}
	case asciiEqualFold(word, "obroute"):
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "OBROUTE is an optimizer-hint comment: write it with a + after the opening /*, e.g. /*+ OBROUTE(shadow=true) */"}
	case namesHint(body):
		return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
			Fix: "the comment names a hint of obroute's but is not one (a bare hint is a comment holding only its word; a word before it, as in /* note: shadow */, makes it no hint); write the hint alone in its comment, e.g. /*+ OBROUTE(shadow=true) */ or /* shadow */, and keep notes free of the words OBROUTE, SHARDINGSPHERE_HINT, shadow and cold_query"}
	default:
		return false, nil
	}
	if err != nil {
		return false, err
	}
	p.cut(sql, start, next)
	return true, nil
}

// An optimizer-hint comment (/*+ … */) is read as MariaDB's optimizer-hint
// parser reads it: a list of hints separated by whitespace (spaces, tabs,
// newlines), each a name and a parenthesised argument list, names in any
// case, with whitespace allowed between a name and its parenthesis. Arguments
// are identifiers, numbers, `quoted` or "quoted" identifiers and the
// punctuation , @ (and, for MySQL's SET_VAR, = and 'strings'), never another
// parenthesis. OBROUTE(...) is obroute's and is applied and removed from the
// comment; the other hints are the server's and stay.

// optHint is one hint of an optimizer-hint comment: its name sql[from:args-1]
// trimmed, its argument list sql[args:close], and to, the end of the hint
// and of the whitespace after it.
type optHint struct {
	from, nameEnd, args, close, to int
}

// nextOptHint reads the hint that starts at or after sql[i] in an
// optimizer-hint comment whose body ends at be. ok is false at the end of the
// body; problem says why the text at bad cannot be read as a hint.
func nextOptHint(sql string, i, be int) (h optHint, ok bool, bad int, problem string) {
	i = skipSpace(sql[:be], i)
	if i >= be {
		return optHint{}, false, 0, ""
	}
	h.from = i
	for i < be && isWordByte(sql[i]) {
		i++
	}
	if i == h.from {
		return h, false, i, "expected the name of a hint, found " + strconv.Quote(sql[i:i+1]) +
			" (hints are separated by spaces, not commas)"
	}
	h.nameEnd = i
	i = skipSpace(sql[:be], i)
	if i >= be || sql[i] != '(' {
		return h, false, h.from, "the hint " + sql[h.from:h.nameEnd] + " has no parenthesised argument list; write " + sql[h.from:h.nameEnd] + "(…)"
	}
	h.args = i + 1
	for i = h.args; i < be; i++ {
		switch c := sql[i]; c {
		case ')':
			h.close = i
			h.to = skipSpace(sql[:be], i+1)
			return h, true, 0, ""
		case '(':
			return h, false, i, "a hint's arguments hold no parenthesis"
		case '`', '"', '\'':
			q := i
			for i++; i < be && sql[i] != c; i++ {
				if sql[i] == '\\' && c == '\'' {
					i++
				}
			}
			if i >= be {
				return h, false, q, "a quoted argument is not closed"
			}
		}
	}
	return h, false, h.from, "the argument list of " + sql[h.from:h.nameEnd] + " has no closing parenthesis"
}

// optimizerHints reads the optimizer-hint comment sql[start:end] (see
// nextOptHint), applies its OBROUTE hints and cuts them from rest: the whole
// comment when it holds nothing else. A comment that cannot be read is the
// server's, unless it names a hint of obroute's: then it is refused. A hint
// whose name is one of obroute's words but not OBROUTE is refused too.
func (p *parser) optimizerHints(sql string, start, end, next int) (found bool, err error) {
	bs, be := trim(sql, start+3, end-2)
	body := sql[bs:be]
	ours, others := 0, 0
	for i := bs; ; {
		h, ok, bad, problem := nextOptHint(sql, i, be)
		if !ok {
			if problem == "" {
				break
			}
			if !mentionsHint(body) {
				return false, nil // the server's, whatever it makes of it
			}
			return false, &Error{Err: ErrMalformedHint, Hint: body, Offset: bs,
				Fix: "the optimizer-hint comment names a hint of obroute's but cannot be read at byte " + strconv.Itoa(bad) +
					": " + problem + "; write /*+ OBROUTE(key=value, ...) */, other hints separated from it by spaces"}
		}
		i = h.to
		name := sql[h.from:h.nameEnd]
		switch {
		case asciiEqualFold(name, "obroute"):
			if err := p.items(sql, h.args, h.close, formOBROUTE); err != nil {
				return false, err
			}
			ours++
		case containsFold(name, "obroute"), namesHint(name), asciiEqualFold(name, "query_level"):
			return false, &Error{Err: ErrUnknownHint, Hint: sql[h.from : h.close+1], Offset: h.from,
				Fix: name + " is not a hint of obroute's nor a hint the server knows; obroute's optimizer hint is OBROUTE(key=value, ...), e.g. OBROUTE(shadow=true)"}
		case namesHint(sql[h.args:h.close]):
			return false, &Error{Err: ErrMalformedHint, Hint: sql[h.from : h.close+1], Offset: h.from,
				Fix: "the server's hint " + name + " names a hint of obroute's in its arguments, which obroute does not read; write obroute's hint as OBROUTE(key=value, ...), e.g. OBROUTE(shadow=true)"}
		default:
			others++
		}
	}
	if ours == 0 {
		return false, nil
	}
	if others == 0 {
		p.cut(sql, start, next)
		return true, nil
	}
	for i, prev := bs, bs; ; {
		h, ok, _, _ := nextOptHint(sql, i, be)
		if !ok {
			break
		}
		i = h.to
		if asciiEqualFold(sql[h.from:h.nameEnd], "obroute") {
			from := h.from
			if h.to == be && prev >= p.kept {
				from = prev // the last hint goes with the whitespace before it
			}
			p.cut(sql, from, h.to)
		}
		prev = h.close + 1
	}
	return true, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// asciiEqualFold reports whether a and b are equal ignoring ASCII case only:
// hint words are read in ASCII, so the letters Unicode case folding takes to
// ASCII ones (ſ to s, the Kelvin sign to k) are not the hint's letters (see
// unicodeSpelling).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerByte(a[i]) != lowerByte(b[i]) {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower returns s with its ASCII letters in lower case, other bytes as
// they are.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

// containsFold reports whether s contains substr ignoring ASCII case.
func containsFold(s, substr string) bool {
	for i := 0; i+len(substr) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(substr)], substr) {
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
		case asciiEqualFold(key, "SHADOW"):
			return p.boolItem(fieldShadow, value, text, at, "SHADOW")
		case asciiEqualFold(key, "DATA_SOURCE_NAME"), asciiEqualFold(key, "dataSourceName"):
			return p.backendItem(value, text, at)
		}
		return &Error{Err: ErrUnknownHint, Hint: text, Offset: at,
			Fix: "obroute does not support ShardingSphere hint key " + key +
				"; it supports SHADOW and DATA_SOURCE_NAME (dataSourceName): remove the key"}
	}
	switch asciiLower(key) {
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
	case asciiEqualFold(value, "true"):
		return p.apply(fl, "true", text, at)
	case asciiEqualFold(value, "false"):
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

// hintInText refuses a comment in the statement's text, after its leading comments, that names
// a hint of obroute's (see namesHint): obroute reads hints only in the comments before the first
// word, and a hint written anywhere else (after the first keyword, at the end, inside an
// executable comment /*! … */, in a line comment) must not be silently lost. String literals and
// quoted identifiers are skipped, read once with backslash escapes and once without (sql_mode
// NO_BACKSLASH_ESCAPES), so that a comment the server may read under either mode is found. The
// content of an executable comment is read as statement text, as the server reads it, and the
// executable comment is refused too when its content names a hint (the server may skip it as a
// comment, by its version number, or run /*!+ OBROUTE(…) */ as code). The comment right after
// the first word was checked by hintAfterFirstWord.
func hintInText(sql string, from int) error {
	if !mentionsHint(sql[from:]) {
		return nil
	}
	if err := commentsInText(sql, from, true); err != nil {
		return err
	}
	return commentsInText(sql, from, false)
}

func commentsInText(sql string, i int, backslash bool) error {
	refuse := func(s, e int, where string) error {
		s, e = trim(sql, s, e)
		return &Error{Err: ErrMalformedHint, Hint: sql[s:e], Offset: s,
			Fix: where + " names a hint of obroute's, which obroute reads only in the comments before the statement's first word; move the hint there, e.g. /*+ OBROUTE(shadow=true) */ INSERT …, and keep other comments free of the words OBROUTE and SHARDINGSPHERE_HINT"}
	}
	exec := 0 // depth of executable comments the scan is in
	for i < len(sql) {
		c := sql[i]
		rest := sql[i:]
		switch {
		case c == '\'' || c == '"' || c == '`':
			q := c
			for i++; i < len(sql) && sql[i] != q; i++ {
				if sql[i] == '\\' && backslash && q != '`' {
					i++
				}
			}
			i++
		case exec > 0 && strings.HasPrefix(rest, "*/"):
			exec--
			i += 2
		case strings.HasPrefix(rest, "/*!") || strings.HasPrefix(rest, "/*M!"):
			j := i + strings.IndexByte(rest, '!') + 1
			k := j
			for k < len(sql) && sql[k] >= '0' && sql[k] <= '9' {
				k++
			}
			end := len(sql)
			if e := strings.Index(sql[k:], "*/"); e >= 0 {
				end = k + e
			}
			// A comment nested first in it is read as a comment of its own below.
			if body := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sql[k:end]), "+")); namesHint(body) && (!strings.HasPrefix(body, "/*") || namesOurs(body)) {
				return refuse(i, min(end+2, len(sql)), "an executable comment")
			}
			exec++
			i = k
		case strings.HasPrefix(rest, "/*"):
			e := strings.Index(sql[i+2:], "*/")
			if e < 0 {
				return nil // unterminated: the server refuses it
			}
			body := sql[i+2 : i+2+e]
			body = strings.TrimSpace(strings.TrimPrefix(body, "+"))
			if namesHint(body) {
				return refuse(i, i+2+e+2, "a comment in the statement's text")
			}
			i += 2 + e + 2
		case c == '#' || strings.HasPrefix(rest, "--") && (len(rest) == 2 || rest[2] <= ' ' || rest[2] == 0x7f):
			end := lineEnd(sql, i)
			from := i + 1
			if c == '-' {
				from = i + 2
			}
			if lineNamesHint(sql[from:end]) {
				return refuse(i, end, "a line comment")
			}
			i = end
		default:
			i++
		}
	}
	return nil
}
