package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A DSN with a typo must not leak: a ';;' typo glues the second backend onto the first one's DSN,
// and go-sql-driver quotes the glued text (with the second password) in its error.
func TestParseDSNErrorsShowNoPassword(t *testing.T) {
	for _, tc := range []struct{ dsn, password string }{
		{"obroute:backends.hot.dsn=app:pw@tcp(127.0.0.1:3306)/app;;backends.cold.dsn=app:Zq9x%PW@tcp(127.0.0.1:3307)", "Zq9x%PW"},
		{"obroute:backends.hot.dsn=app:Zq9x%PW@tcp(127.0.0.1:3306)/app?parseTime=maybe", "Zq9x%PW"},
		{"app:Zq9x%PW@tcp(127.0.0.1:3306)/app?loc=Mars%2FOlympus", "Zq9x%PW"},
		{"obroute:backends.hot.dsn=app@SERVICE:orders:Zq9x%PW@tcp(127.0.0.1:1)/test", "Zq9x%PW"},
	} {
		_, err := ParseDSN(tc.dsn)
		if err == nil {
			t.Fatalf("ParseDSN(%q) succeeded; want an error", tc.dsn)
		}
		if strings.Contains(err.Error(), tc.password) {
			t.Errorf("error shows the password: %v", err)
		}
		var ce *Error
		if !errors.As(err, &ce) || strings.Contains(ce.Error(), tc.password) {
			t.Errorf("the *config.Error inside (%v) is missing or shows the password", ce)
		}
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		text    string
		secrets []string
		want    string
	}{
		{"dial app:pw1@tcp(h:1)/d failed", nil, "dial app:***@tcp(h:1)/d failed"},
		{`invalid dbname "app;backends.cold.dsn=app:Zq9x%PW@tcp(127.0.0.1:3307)"`, nil, `invalid dbname "app;backends.cold.dsn=app:***@tcp(127.0.0.1:3307)"`},
		{"user root:x@/db and mail a@b.c", nil, "user root:***@/db and mail a@b.c"},
		{"token s3cret in a log line", []string{"s3cret"}, "token *** in a log line"},
		{"abcabc", []string{"abc", "bcab"}, "a***c"},
		{"x***", []string{"x*"}, "*****"},
		{"stars *** stay", []string{"*"}, "stars *** stay"},
		{"empty secret", []string{""}, "empty secret"},
	} {
		if got := Scrub(tc.text, tc.secrets); got != tc.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tc.text, tc.secrets, got, tc.want)
		}
	}
}

func TestScrubErrorKeepsTheChain(t *testing.T) {
	inner := &Error{Where: "backends.hot.dsn", Problem: "quoted app:s3cret@tcp(h:1)/d"}
	err := ScrubError(fmt.Errorf("obroute: opening: %w (password s3cret)", inner), []string{"s3cret"})
	var ce *Error
	if !errors.As(err, &ce) || ce != inner {
		t.Fatalf("errors.As lost the *Error: %v", err)
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(ce.Error(), "s3cret") {
		t.Fatalf("still shows the secret: %q / %q", err, ce)
	}
	if plain := errors.New("nothing secret"); ScrubError(plain, []string{"s3cret"}) != plain {
		t.Fatal("an error with nothing to scrub must come back as it is")
	}
}

// dsnShapes are the ways a password stands in a DSN, well written or not: shape picks one, junk is
// the fuzzer's other text (parameters, names, the rest of a broken DSN).
func dsnShape(shape uint8, pw, junk string) string {
	esc := strings.ReplaceAll(pw, ";", ";;") // a ';' inside an obroute DSN value
	switch shape % 9 {
	case 0:
		return "app:" + pw + "@tcp(127.0.0.1:3306)/app" + junk
	case 1:
		return "obroute:backends.hot.dsn=app:" + esc + "@tcp(127.0.0.1:3306)/app" + junk
	case 2: // the ';;' typo
		return "obroute:backends.hot.dsn=app:pw@tcp(127.0.0.1:3306)/app;;backends.cold.dsn=app:" + esc + "@tcp(127.0.0.1:3307)" + junk
	case 3:
		return "obroute:backends.hot.dsn=app:" + esc + "@tcp(127.0.0.1:3306)/app?parseTime=" + junk
	case 4:
		return "obroute:backends.hot.dsn=app@SERVICE:orders:" + esc + "@tcp(127.0.0.1:1)/test;" + junk
	case 5:
		return "app:" + pw + "@tcp(127.0.0.1:3306)" + junk
	case 6:
		return "obroute:backends.hot.dsn=app:" + esc + "@tcp(h:1)/d;backends.cold.dsn=app:" + esc + "@" + junk
	case 7:
		return "obroute:backends.hot.dsn=app:" + esc + "@tcp(h:1)/d;" + junk + "=x"
	default:
		return "obroute:" + junk + "=app:" + esc + "@tcp(h:1)/d"
	}
}

// passwordLike: at least 4 bytes with a letter or digit, so that it cannot be the mask or a
// piece of an error message's own words (a password ";" is in every message about separators).
func passwordLike(pw string) bool {
	return len(pw) >= 4 && strings.IndexFunc(pw, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}) >= 0
}

// No error of ParseDSN shows a password given in the DSN, whatever else the DSN holds.
func FuzzParseDSN(f *testing.F) {
	for _, seed := range []struct {
		pw    string
		shape uint8
		junk  string
	}{
		{"Zq9x%PW", 2, ""},
		{"S3cr3tPw", 0, "?parseTime=maybe"},
		{"S3cr3tPw", 1, ";routes.a=hot;;x;default=hot"},
		{"a;b", 3, "yes"},
		{"p@ss/word", 5, ""},
		{"hot", 7, "colour"},
		{"pw)(", 6, "tcp(h:2)"},
		{"tcp", 8, "backends.hot.dsn"},
		{"orders:x", 4, "services.orders.candidates=nohost"},
	} {
		f.Add(seed.pw, seed.shape, seed.junk)
	}
	f.Fuzz(func(t *testing.T, pw string, shape uint8, junk string) {
		if !passwordLike(pw) || strings.Contains(junk, "config") || strings.Contains(dsnShape(shape, "\x00", junk), pw) {
			return // config= reads files; the password must be in the DSN as a password only
		}
		dsn := dsnShape(shape, pw, junk)
		c, err := ParseDSN(dsn)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("DSN %q: error shows the password %q: %v", dsn, pw, err)
			}
			return
		}
		if len(c.Backends) == 0 || c.Backend(c.Default) == nil {
			t.Fatalf("valid config without a usable default: %+v", c)
		}
		for _, b := range c.Backends {
			if b.MySQL == nil || b.Role == "" {
				t.Fatalf("backend %q not completed by Validate", b.Name)
			}
		}
	})
}
