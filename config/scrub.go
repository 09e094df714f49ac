package config

import (
	"errors"
	"slices"
	"strings"
)

// Mask is what Scrub writes in place of a password.
const Mask = "***"

// Scrub returns text without any of secrets (each occurrence becomes Mask) and without the
// password of anything in it written like a go-sql-driver DSN (user:password@tcp(…), user:password@/db).
// Errors, log lines and EXPLAIN text pass through it before they leave obroute; give it the
// configuration's passwords ((*Config).Secrets). A secret made of '*' only cannot be told from
// the mask and is left alone.
func Scrub(text string, secrets []string) string {
	text = maskUserinfo(text)
	// Longest first, so a password containing another is masked whole; repeated until none is
	// left, since masking one can join the text around it into another.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for changed := true; changed; {
		changed = false
		for _, s := range secrets {
			if strings.Trim(s, "*") == "" || !strings.Contains(text, s) {
				continue
			}
			text = strings.ReplaceAll(text, s, Mask)
			changed = true
		}
	}
	return text
}

// ScrubError returns err with Scrub applied to its text; errors.Is and errors.As still see
// err's chain, and a *Error in it is scrubbed in place, so that it does not show a password
// either. It returns err itself when there is nothing to scrub.
func ScrubError(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		ce.Where, ce.Problem = Scrub(ce.Where, secrets), Scrub(ce.Problem, secrets)
	}
	msg := err.Error()
	clean := Scrub(msg, secrets)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

// scrubbedError is an error whose text was scrubbed; it unwraps to the original.
type scrubbedError struct {
	msg string
	err error
}

// Error implements error: the message with the secrets masked.
func (e *scrubbedError) Error() string { return e.msg }

// Unwrap returns the original error, for errors.Is and errors.As.
func (e *scrubbedError) Unwrap() error { return e.err }

// Secrets returns every password the configuration holds: those of the backends' parsed
// go-sql-driver configurations and those their DSN texts carry, however a DSN is read.
func (c *Config) Secrets() []string {
	var out []string
	for _, b := range c.Backends {
		if b.MySQL != nil && b.MySQL.Passwd != "" {
			out = append(out, b.MySQL.Passwd, serviceSecret(b.MySQL.Passwd))
		}
		out = append(out, DSNSecrets(b.DSN)...)
	}
	return out
}

// DSNSecrets returns the texts a DSN may carry as passwords, before it is parsed: for a
// go-sql-driver DSN its password, for an obroute DSN the password of every item that holds a
// DSN, whether its ';' were meant as separators or as ';;' escapes.
func DSNSecrets(dsn string) []string {
	var out []string
	keep := func(pw string) {
		for _, p := range []string{pw, serviceSecret(pw)} {
			if p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	// add keeps the password go-sql-driver would read in s, and, for a DSN broken by what follows
	// it, the text between the first ':' and every '@'.
	add := func(s string) {
		keep(dsnPassword(s))
		colon := strings.IndexByte(s, ':')
		for i := colon + 1; colon >= 0 && i < len(s); i++ {
			if s[i] == '@' {
				keep(s[colon+1 : i])
			}
		}
	}
	add(dsn)
	body, ok := strings.CutPrefix(dsn, Prefix)
	if !ok {
		return out
	}
	pieces := strings.Split(body, ";")
	if items, err := splitItems(body); err == nil {
		for _, it := range items {
			pieces = append(pieces, it.value)
		}
	}
	for _, p := range pieces {
		_, v, _ := strings.Cut(p, "=")
		add(p)
		add(v)
		// An unescaped ';' inside the password cuts it short: mask the part before the cut.
		if at := strings.IndexByte(v, ':'); at >= 0 && !strings.Contains(v, "@") {
			keep(v[at+1:])
		}
	}
	return out
}

// serviceSecret is the password inside what go-sql-driver reads as the password of a service
// user app@SERVICE:orders:pw ("orders:pw"), "" when there is no ':'.
func serviceSecret(pw string) string {
	_, s, _ := strings.Cut(pw, ":")
	return s
}

// dsnPassword is the password of a go-sql-driver DSN as go-sql-driver reads it: the text
// between the first ':' and the last '@' before the last '/'.
func dsnPassword(dsn string) string {
	end := strings.LastIndexByte(dsn, '/')
	if end < 0 {
		end = len(dsn)
	}
	at := strings.LastIndexByte(dsn[:end], '@')
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(dsn[:at], ":")
	return pw
}

// maskUserinfo masks the password of every user:password@ that is followed by a go-sql-driver
// address (tcp(…), unix(…), any protocol(…)) or by /database.
func maskUserinfo(text string) string {
	if !strings.Contains(text, "@") {
		return text
	}
	var b strings.Builder
	last := 0 // text[:last] is written
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || !addressFollows(text[i+1:]) {
			continue
		}
		start := strings.LastIndexAny(text[last:i], " \t\n\"'`=;,") + last + 1
		colon := strings.IndexByte(text[start:i], ':')
		if colon < 0 || start+colon+1 == i {
			continue
		}
		b.WriteString(text[last : start+colon+1])
		b.WriteString(Mask)
		last = i
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// addressFollows reports whether s starts like the address part of a go-sql-driver DSN.
func addressFollows(s string) bool {
	if strings.HasPrefix(s, "/") {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '(':
			return i > 0
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return false
}
