package hint

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseLeading checks the contract of ParseLeading and StatementStart on
// any input. The committed corpus in testdata/fuzz/FuzzParseLeading holds the
// parseCases inputs.
func FuzzParseLeading(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		hints, rest, err := ParseLeading(sql)
		start := StatementStart(sql)
		if start < 0 || start > len(sql) {
			t.Fatalf("StatementStart = %d, out of range", start)
		}

		// Hints come only from the leading comments: the statement text
		// cannot add, remove or break one. It can only be refused for a hint
		// comment right after its first word.
		prefixHints, _, prefixErr := ParseLeading(sql[:start])
		textHints, textRest, textErr := ParseLeading(sql[start:])
		if !textHints.IsZero() || textErr == nil && textRest != sql[start:] {
			t.Fatalf("statement text %q yields hints %v, rest %q, error %v", sql[start:], textHints, textRest, textErr)
		}
		if prefixErr == nil && err != nil && textErr == nil || prefixErr != nil && err == nil {
			t.Fatalf("leading comments alone give (%v, %v), the text %v, the whole statement (%v, %v)", prefixHints, prefixErr, textErr, hints, err)
		}
		if err == nil && prefixHints != hints {
			t.Fatalf("leading comments alone give %v, whole statement %v", prefixHints, hints)
		}

		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not a *Error", err)
			}
			if !errors.Is(err, ErrMalformedHint) && !errors.Is(err, ErrUnknownHint) && !errors.Is(err, ErrHintConflict) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if he.Offset < 0 || he.Offset >= len(sql) || !strings.HasPrefix(sql[he.Offset:], he.Hint) {
				t.Fatalf("error %v: Hint %q is not at byte %d of the statement", err, he.Hint, he.Offset)
			}
			if !hints.IsZero() || rest != sql {
				t.Fatalf("on error got hints %v, rest %q; want zero and the input", hints, rest)
			}
			return
		}

		if rest != "" && isSpace(rest[0]) {
			t.Fatalf("rest %q starts with whitespace", rest)
		}
		if !isSubsequence(rest, sql) {
			t.Fatalf("rest %q is not a subsequence of %q", rest, sql)
		}
		if !strings.Contains(sql[:start], "/*") && (!hints.IsZero() || rest != sql[skipSpace(sql, 0):]) {
			t.Fatalf("no leading block comment, yet hints %v and rest %q", hints, rest)
		}
		if rest[StatementStart(rest):] != sql[start:] {
			t.Fatalf("statement text changed: %q, was %q", rest[StatementStart(rest):], sql[start:])
		}
		if h, r, e := ParseLeading(rest); !h.IsZero() || r != rest || e != nil {
			t.Fatalf("rest %q still holds hints: %v, %q, %v", rest, h, r, e)
		}
	})
}

func isSubsequence(sub, s string) bool {
	i := 0
	for j := 0; j < len(s) && i < len(sub); j++ {
		if s[j] == sub[i] {
			i++
		}
	}
	return i == len(sub)
}
