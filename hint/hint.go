package hint

import (
	"strconv"
	"strings"
)

// Level is the query level a caller declares for a statement: how far into
// the history store it may reach and how long it may take.
type Level uint8

const (
	// LevelNone means the caller declared no level.
	LevelNone Level = iota
	// L1 reads the hot store only and answers in milliseconds; a statement
	// declared L1 whose range reaches cold data is rejected by the router.
	L1
	// L2 may cross hot and cold data: it is split and merged, about 2 s budget.
	L2
	// L3 reads cold data only and may take 5 s and more.
	L3
)

// String returns "L1", "L2" or "L3", "none" for LevelNone.
func (l Level) String() string {
	return name(l, levelNames[:], "Level")
}

var levelNames = [...]string{LevelNone: "none", L1: "L1", L2: "L2", L3: "L3"}

// name returns the name of v in names, or kind(v) for a value without one.
func name[T ~uint8](v T, names []string, kind string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return kind + "(" + strconv.Itoa(int(v)) + ")"
}

// ParseLevel reads a query level written as "L2", "l2" or "2". Any other text
// is an *Error wrapping ErrMalformedHint.
func ParseLevel(s string) (Level, error) {
	v := s
	if len(v) == 2 && (v[0] == 'L' || v[0] == 'l') {
		v = v[1:]
	}
	switch v {
	case "1":
		return L1, nil
	case "2":
		return L2, nil
	case "3":
		return L3, nil
	}
	return LevelNone, &Error{Err: ErrMalformedHint, Hint: s, Offset: -1,
		Fix: "a query level is L1, L2 or L3"}
}

// Shadow says whether a statement is shadow traffic.
type Shadow uint8

const (
	// ShadowUnset means the caller said nothing; the shadow rule decides.
	ShadowUnset Shadow = iota
	// ShadowOn marks the statement as shadow traffic.
	ShadowOn
	// ShadowOff explicitly marks the statement as production traffic; it
	// conflicts with a ShadowOn from another source.
	ShadowOff
)

// String returns "unset", "shadow" or "production".
func (s Shadow) String() string {
	return name(s, shadowNames[:], "Shadow")
}

var shadowNames = [...]string{ShadowUnset: "unset", ShadowOn: "shadow", ShadowOff: "production"}

// Set is the hints that apply to one statement. The zero Set means no hint.
type Set struct {
	// Shadow says whether the statement is shadow traffic.
	Shadow Shadow
	// ColdQuery means the caller allows the statement to read the history
	// store; false means not declared.
	ColdQuery bool
	// Level is the declared query level.
	Level Level
	// Backend forces the statement to the backend of that name; "" means none.
	Backend string
}

// IsZero reports whether s carries no hint at all.
func (s Set) IsZero() bool { return s == Set{} }

// String writes s in OBROUTE syntax, e.g. "shadow=true, query_level=L2", so
// that it can be pasted into a /*+ OBROUTE(...) */ comment; "none" when s is
// zero.
func (s Set) String() string {
	if s.IsZero() {
		return "none"
	}
	var parts []string
	switch s.Shadow {
	case ShadowOn:
		parts = append(parts, "shadow=true")
	case ShadowOff:
		parts = append(parts, "shadow=false")
	}
	if s.ColdQuery {
		parts = append(parts, "cold_query=true")
	}
	if s.Level != LevelNone {
		parts = append(parts, "query_level="+s.Level.String())
	}
	if s.Backend != "" {
		parts = append(parts, "backend="+s.Backend)
	}
	return strings.Join(parts, ", ")
}

// Combine merges the hints of the call's context with those of the
// statement's leading comments, field by field: a field set on one side only
// is taken, the same value on both sides is fine, and different values are an
// *Error wrapping ErrHintConflict; neither side ever silently wins. ColdQuery
// is granted when either side grants it.
func Combine(fromContext, fromComment Set) (Set, error) {
	out := fromContext
	if fromComment.Shadow != ShadowUnset {
		if out.Shadow != ShadowUnset && out.Shadow != fromComment.Shadow {
			return Set{}, combineConflict("shadow",
				"shadow="+boolText(out.Shadow == ShadowOn), "shadow="+boolText(fromComment.Shadow == ShadowOn))
		}
		out.Shadow = fromComment.Shadow
	}
	out.ColdQuery = out.ColdQuery || fromComment.ColdQuery
	if fromComment.Level != LevelNone {
		if out.Level != LevelNone && out.Level != fromComment.Level {
			return Set{}, combineConflict("query_level",
				"query_level="+out.Level.String(), "query_level="+fromComment.Level.String())
		}
		out.Level = fromComment.Level
	}
	if fromComment.Backend != "" {
		if out.Backend != "" && out.Backend != fromComment.Backend {
			return Set{}, combineConflict("backend", "backend="+out.Backend, "backend="+fromComment.Backend)
		}
		out.Backend = fromComment.Backend
	}
	return out, nil
}

func combineConflict(key, ctxText, commentText string) error {
	return &Error{Err: ErrHintConflict, Hint: key, Offset: -1,
		Fix: "the context says " + ctxText + " but a statement comment says " + commentText +
			"; a comment cannot override the context: remove the comment or change the context hint"}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
