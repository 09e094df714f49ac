package metadata

import (
	"errors"
	"strings"
	"testing"
)

func TestQuoteTable(t *testing.T) {
	tests := []struct {
		in, want string // want "" means ErrInvalidIdentifier
	}{
		{"", "`shard_metadata`"},
		{"shard_metadata", "`shard_metadata`"},
		{"meta.shard_metadata", "`meta`.`shard_metadata`"},
		{"T$1", "`T$1`"},
		{strings.Repeat("a", 64), "`" + strings.Repeat("a", 64) + "`"},
		{strings.Repeat("a", 65), ""},
		{"a.b.c", ""},
		{".t", ""},
		{"t.", ""},
		{"shard metadata", ""},
		{"t`; DROP TABLE x; --", ""},
		{"表", ""},
	}
	for _, tt := range tests {
		got, err := quoteTable(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrInvalidIdentifier) {
				t.Errorf("quoteTable(%q) = %q, %v; want ErrInvalidIdentifier", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("quoteTable(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzQuoteTable checks that an accepted name is quoted as one or two whole
// identifiers, so it cannot change the statement around it.
func FuzzQuoteTable(f *testing.F) {
	for _, s := range []string{"", "shard_metadata", "db.t", "a.b.c", "t`x", "x y", "$_9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		quoted, err := quoteTable(name)
		if err != nil {
			if !errors.Is(err, ErrInvalidIdentifier) {
				t.Fatalf("quoteTable(%q) error %v does not wrap ErrInvalidIdentifier", name, err)
			}
			return
		}
		if name == "" {
			name = DefaultTable
		}
		parts := strings.Split(name, ".")
		for i, p := range parts {
			parts[i] = "`" + p + "`"
		}
		if quoted != strings.Join(parts, ".") || strings.Count(quoted, "`") != 2*len(parts) {
			t.Fatalf("quoteTable(%q) = %q", name, quoted)
		}
	})
}

func TestParseUnix(t *testing.T) {
	tests := []struct {
		in      string
		sec     int64
		nsec    int64
		zero    bool
		invalid bool
	}{
		{in: "", zero: true},
		{in: "0", zero: true},
		{in: "0.000000", zero: true},
		{in: "1735689600", sec: 1735689600},
		{in: "1735689600.5", sec: 1735689600, nsec: 500000000},
		{in: "1735689600.000001", sec: 1735689600, nsec: 1000},
		{in: "17356x", invalid: true},
		{in: "1.1234567890", invalid: true},
		{in: "1.-5", invalid: true},
	}
	for _, tt := range tests {
		got, err := parseUnix(tt.in)
		switch {
		case tt.invalid:
			if err == nil {
				t.Errorf("parseUnix(%q) = %v, want an error", tt.in, got)
			}
		case err != nil:
			t.Errorf("parseUnix(%q): %v", tt.in, err)
		case tt.zero != got.IsZero() || (!tt.zero && (got.Unix() != tt.sec || int64(got.Nanosecond()) != tt.nsec)):
			t.Errorf("parseUnix(%q) = %v, want %d.%09d (zero %v)", tt.in, got, tt.sec, tt.nsec, tt.zero)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	if got, err := parseDateTime("2025-01-31 23:59:59.123456"); err != nil || !got.Equal(at(t, "2025-01-31 23:59:59").Add(123456000)) {
		t.Errorf("parseDateTime with microseconds = %v, %v", got, err)
	}
	for _, bad := range []string{"0000-00-00 00:00:00", "2025-02-30 00:00:00", "2025-01-01"} {
		if _, err := parseDateTime(bad); err == nil {
			t.Errorf("parseDateTime(%q) succeeded", bad)
		}
	}
}
