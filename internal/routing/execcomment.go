package routing

import "strings"

// MariaDB runs the content of an executable comment (/*! … */, /*M! … */) as statement text,
// unless the comment carries a version number (five or six digits) the server skips it by: a
// MySQL 5.7 version (50700 to 99999) without the M, or one above the server's own version. MySQL
// skips /*M! … */ altogether. obroute reads the statement as the server does where that does not
// depend on the server: the markers of a comment every server runs (no version, or one below
// 50700) are read as blanks and its content as text; a comment whose fate depends on the server
// (/*M! … */, a version of 50700 and above) is left as it is and the statement is marked, so that
// a shadow table's values are not read from it (the route is refused instead).

// execComments returns sql with the executable comments every server runs opened: their
// markers (/*!, the version, the closing */) replaced by blanks, so that every offset stays.
// why names the first executable comment whose reading depends on the server, "" when none.
func execComments(sql string) (out string, why string) {
	if !strings.Contains(sql, "/*!") && !strings.Contains(sql, "/*M!") {
		return sql, ""
	}
	var b []byte
	blank := func(from, to int) {
		if b == nil {
			b = []byte(sql)
		}
		for k := from; k < to; k++ {
			b[k] = ' '
		}
	}
	inExec := -1 // where the executable comment being opened starts, -1 outside one
	for i := 0; i < len(sql); {
		c := sql[i]
		rest := sql[i:]
		switch {
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(sql) && sql[i] != c; i++ {
				if sql[i] == '\\' && c != '`' {
					i++
				}
			}
			i++
		case inExec >= 0 && strings.HasPrefix(rest, "*/"):
			blank(i, i+2)
			inExec = -1
			i += 2
		case inExec < 0 && (strings.HasPrefix(rest, "/*!") || strings.HasPrefix(rest, "/*M!")):
			j := i + strings.IndexByte(rest, '!') + 1
			k := j
			for k < len(sql) && k < j+6 && isDigit(sql[k]) {
				k++
			}
			if k-j < 5 {
				k = j // fewer than five digits: no version, the digits are text
			}
			version := 0
			for _, d := range sql[j:k] {
				version = version*10 + int(d-'0')
			}
			if sql[i+2] == 'M' || k > j && version >= 50700 {
				end := strings.Index(sql[i+2:], "*/")
				if end < 0 {
					end = len(sql) - i - 4
				}
				if why == "" {
					why = "the executable comment " + sql[i:i+4+end] + ", which a server runs or skips by its own version (MariaDB runs /*M! … */, MySQL skips it)"
				}
				i += 4 + end
				continue
			}
			blank(i, k)
			inExec = i
			i = k
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
				continue
			}
			i += 4 + end
		case c == '#' || strings.HasPrefix(rest, "--") && (len(rest) == 2 || rest[2] <= ' ' || rest[2] == 0x7f):
			if inExec >= 0 {
				i++ // a line comment would hide the */: leave it to the lexer
				continue
			}
			i = lineEndAt(sql, i)
		default:
			i++
		}
	}
	if b == nil {
		return sql, why
	}
	return string(b), why
}

func lineEndAt(sql string, i int) int {
	if nl := strings.IndexByte(sql[i:], '\n'); nl >= 0 {
		return i + nl + 1
	}
	return len(sql)
}
