package hint

import (
	"errors"
	"strconv"
)

// Sentinel errors, wrapped by *Error; test them with errors.Is.
var (
	// ErrMalformedHint: a hint comment or value is not written the way this
	// package reads it (bad value, missing "=", OBROUTE(...) not alone in its
	// comment, …).
	ErrMalformedHint = errors.New("malformed hint")
	// ErrUnknownHint: a hint key obroute does not know or does not support,
	// inside OBROUTE(...) or a SHARDINGSPHERE_HINT comment.
	ErrUnknownHint = errors.New("unknown hint")
	// ErrHintConflict: the same hint is given twice with different values,
	// within one statement's comments or between the context and a comment.
	ErrHintConflict = errors.New("conflicting hints")
)

// maxHintText bounds how much of the offending text an error repeats.
const maxHintText = 64

// Error describes one bad hint: which one, where, and how to write it.
// Unwrap returns one of the sentinels above.
type Error struct {
	// Err is ErrMalformedHint, ErrUnknownHint or ErrHintConflict.
	Err error
	// Hint is the offending hint as written, e.g. "shadow=yes".
	Hint string
	// Offset is the byte offset of Hint in the statement text, or -1 when
	// the hint did not come from a statement comment.
	Offset int
	// Fix says what is wrong and how to write the hint correctly.
	Fix string
}

// Error implements error.
func (e *Error) Error() string {
	h := e.Hint
	if len(h) > maxHintText {
		h = h[:maxHintText] + "…"
	}
	msg := "hint: " + e.Err.Error() + " " + strconv.Quote(h)
	if e.Offset >= 0 {
		msg += " at byte " + strconv.Itoa(e.Offset) + " of the statement"
	}
	return msg + ": " + e.Fix
}

// Unwrap returns the sentinel, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }
