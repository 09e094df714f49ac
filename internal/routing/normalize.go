package routing

// Statements that differ only in their literal values share one cache entry: before the cache
// lookup, a single pass of the lexer replaces each literal that is a value (a string or a
// decimal number compared with a column, inserted, assigned) by a marker, and the marked text
// is the cache key. The literal values become routing arguments, as ? arguments are; the text
// sent to the server stays the application's own.
//
// A literal that shapes the statement rather than feeding it a value is kept in the key as
// written, so that statements that differ in it have different entries: the select list (column
// names, constants of a grouped query), GROUP BY, HAVING, ORDER BY (positions: ORDER BY 1),
// LIMIT and OFFSET, INTERVAL counts, the arguments of clock, date-arithmetic and type
// functions (NOW(3), CHAR(10)), aliases, collations, typed and introduced literals (DATE '…',
// _utf8mb4'…', N'…', X'…', 0x…), and everything inside comments, executable comments and
// optimizer hints included. An IN list of another length is another key.

// literal is a literal replaced in the cache key, as written.
type literal struct {
	text string // as written: quotes, escapes and adjacent strings included
	num  bool   // a decimal number; else a string
}

// value is the literal's value as routing reads it: a number as written, a string's content.
func (l *literal) value() string {
	if l.num {
		return l.text
	}
	lx := lexer{s: l.text}
	t, _, _ := lx.next()
	return t.val
}

// Marks of the cache key: a normalized key starts with keyMark, and each replaced literal is
// one byte, strMark or numMark. A text with one of these bytes is never normalized, so no text
// is the key of another, and a key is never longer than its text and one byte.
const (
	keyMark = '\x00'
	strMark = '\x01'
	numMark = '\x02'
)

// maxNormDepth bounds the parentheses the normalizer follows; a deeper statement is keyed by its
// text.
const maxNormDepth = 32

// word classes of the normalizer.
const (
	wNone       uint8 = iota
	wStart            // a statement whose literals are normalized starts with it
	wValues           // starts a clause whose literals are values
	wShape            // starts a clause whose literals shape the statement
	wSet              // UNION, INTERSECT, EXCEPT: the next SELECT starts again
	wBefore           // a literal right after it is kept (INTERVAL, AS, COLLATE, …)
	wFunc             // a literal among its parenthesized arguments is kept
	wBeforeFunc       // both
)

var normWords = map[string]uint8{
	"select": wShape, "with": wStart, "insert": wStart, "replace": wStart, "delete": wStart,
	"update": wValues, "from": wValues, "where": wValues, "on": wValues, "set": wValues,
	"values": wValues, "value": wValues, "into": wValues, "using": wValues,
	"group": wShape, "having": wShape, "order": wShape, "limit": wShape, "window": wShape,
	"returning": wShape, "for": wShape, "lock": wShape, "procedure": wShape,
	"union": wSet, "intersect": wSet, "except": wSet,
	"interval": wBefore, "as": wBefore, "collate": wBefore, "charset": wBefore, "escape": wBefore,
	"separator": wBefore, "by": wBefore, "offset": wBefore, "binary": wBefore,
	"date": wBeforeFunc, "time": wBeforeFunc, "timestamp": wBeforeFunc,
	// date arithmetic, clocks and formats the time analysis reads structurally
	"date_add": wFunc, "date_sub": wFunc, "adddate": wFunc, "subdate": wFunc, "timestampadd": wFunc,
	"timestampdiff": wFunc, "now": wFunc, "current_timestamp": wFunc, "localtime": wFunc,
	"localtimestamp": wFunc, "sysdate": wFunc, "utc_timestamp": wFunc, "curtime": wFunc,
	"current_time": wFunc, "utc_time": wFunc, "unix_timestamp": wFunc, "from_unixtime": wFunc,
	"str_to_date": wFunc, "date_format": wFunc, "convert_tz": wFunc, "match": wFunc, "against": wFunc,
	"cast": wFunc, "convert": wFunc, "json_extract": wFunc, "json_value": wFunc,
	// types with a length or precision
	"char": wFunc, "varchar": wFunc, "nchar": wFunc, "varbinary": wFunc, "decimal": wFunc, "dec": wFunc,
	"numeric": wFunc, "float": wFunc, "double": wFunc, "datetime": wFunc, "int": wFunc, "integer": wFunc,
	"bigint": wFunc, "smallint": wFunc, "tinyint": wFunc, "mediumint": wFunc, "bit": wFunc, "year": wFunc,
	"signed": wFunc, "unsigned": wFunc,
}

// normalized is a statement's cache key and the literals it replaced.
type normalized struct {
	key   []byte
	lits  []literal
	slots []int32 // when asked: the placeholder index of each literal (? and literals numbered in text order)
	// exec: the text has an executable comment, whose placeholders the parser may not see.
	exec bool
}

// normalizeLiterals returns the key of sql, appended to key, and its literals, appended to
// lits, in one pass of the lexer; with slots, their placeholder indexes too. ok is false when
// the statement is keyed by its text: not a SELECT, INSERT, REPLACE, UPDATE, DELETE or WITH,
// without a literal to replace, with a byte of a mark, too deep, not lexed to its end, or a text
// of several statements.
func normalizeLiterals(sql string, key []byte, lits []literal, slots bool) (n normalized, ok bool) {
	if len(sql) == 0 || hasMarkByte(sql) {
		return n, false
	}
	n = normalized{key: key, lits: lits}
	var (
		l     = lexer{s: sql}
		shape [maxNormDepth + 1]bool // per depth: literals of the current clause are kept
		fn    [maxNormDepth + 1]bool // per depth: inside the arguments of a wFunc word
		depth int
		prev  seen // the previous token
		prev2 seen
		first = true
		slot  int32
		last  int // sql[last:] is not yet in the key
	)
	n.key = append(n.key, keyMark)
	for {
		t, more, good := l.next()
		if !good {
			return n, false
		}
		if !more {
			break
		}
		if prev.kind == tokPunct && prev.text == ";" {
			return n, false // a text of several statements is routed statement by statement
		}
		class := wNone
		if t.kind == tokWord {
			class = wordClass(t.text)
		}
		if l.exec {
			n.exec = true
		}
		if first && !(t.kind == tokPunct && t.text == "(") {
			if !(class == wStart || t.is("select") || t.is("update")) {
				return n, false
			}
			first = false
		}
		switch t.kind {
		case tokPunct:
			switch t.text {
			case "(":
				if depth == maxNormDepth {
					return n, false
				}
				depth++
				shape[depth] = shape[depth-1]
				fn[depth] = fn[depth-1] || prev.class == wFunc || prev.class == wBeforeFunc
			case ")":
				if depth > 0 {
					depth--
				}
			}
		case tokWord:
			switch class {
			case wShape:
				shape[depth] = true
			case wValues, wStart, wSet:
				shape[depth] = false
			}
		case tokParam:
			slot++
		case tokString, tokNumber:
			if l.exec || shape[depth] || fn[depth] || !replaceable(&t, &prev, &prev2) {
				break
			}
			n.key = append(n.key, sql[last:t.pos]...)
			if t.kind == tokNumber {
				n.key = append(n.key, numMark)
			} else {
				n.key = append(n.key, strMark)
			}
			last = t.end
			n.lits = append(n.lits, literal{text: t.text, num: t.kind == tokNumber})
			if slots {
				n.slots = append(n.slots, slot)
			}
			slot++
		}
		prev2, prev = prev, seen{kind: t.kind, text: t.text, class: class}
	}
	if len(n.lits) == 0 || first {
		return n, false
	}
	n.key = append(n.key, sql[last:]...)
	return n, true
}

// seen is what the normalizer keeps of the tokens before the current one.
type seen struct {
	kind  tokKind
	text  string
	class uint8 // of a word
}

// replaceable reports whether the literal t, after prev and prev2, is a value.
func replaceable(t *token, prev, prev2 *seen) bool {
	if t.kind == tokString {
		if t.national || prev.kind == tokWord && prev.text[0] == '_' { // N'…', _utf8mb4'…'
			return false
		}
	} else if c := t.text[0]; !isDigit(c) && c != '.' || len(t.text) > 1 && (t.text[1] == 'x' || t.text[1] == 'b') {
		return false // X'…', B'…', 0x…, 0b…
	}
	switch prev.kind {
	case tokWord:
		return prev.class != wBefore && prev.class != wBeforeFunc
	case tokPunct:
		switch prev.text {
		case "->", "->>":
			return false
		case "-", "+": // INTERVAL -1 DAY
			return prev2.class != wBefore
		}
	}
	return true
}

// wordLengths has bit n of entry c set when a word of normWords starts with letter 'a'+c and
// has n bytes: most identifiers are told apart from them without a map lookup.
var wordLengths = func() (m [26]uint32) {
	for w := range normWords {
		m[w[0]-'a'] |= 1 << len(w)
	}
	return m
}()

// wordClass is the normalizer's class of an unquoted word, without allocating.
func wordClass(w string) uint8 {
	c := w[0] | 0x20
	if len(w) > 24 || c < 'a' || c > 'z' || wordLengths[c-'a']&(1<<len(w)) == 0 {
		return wNone
	}
	var buf [24]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return normWords[string(buf[:len(w)])]
}

// hasMarkByte reports whether s has a byte of the marks of a key.
func hasMarkByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= numMark {
			return true
		}
	}
	return false
}

// literalBound is about the number of literals of sql, counted without the lexer: quoted
// strings, and digits after a byte that is not part of a word (a comment counted as text may
// make it more, rarely less: a buffer of that size grows then).
func literalBound(sql string) int {
	n := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			n++
			for i++; i < len(sql) && sql[i] != c; i++ {
				if sql[i] == '\\' {
					i++
				}
			}
		case (isDigit(c) || c == '.') && (i == 0 || !isWordByte(sql[i-1]) && sql[i-1] != '.'):
			n++
			for i+1 < len(sql) && (isWordByte(sql[i+1]) || sql[i+1] == '.') {
				i++
			}
		}
	}
	return n
}

// normalizedText is sql with its replaced literals written as ? placeholders: the text the
// parser reads for an analysis shared by every literal value.
func normalizedText(key []byte) string {
	b := make([]byte, 0, len(key))
	for _, c := range key[1:] {
		if c == strMark || c == numMark {
			c = '?'
		}
		b = append(b, c)
	}
	return string(b)
}
