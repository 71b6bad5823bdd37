package v1alpha1

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ..."},
		// "é" is two bytes: the cut moves back to its start rather than split it.
		{"abcdefé-xyz-more", 10, "abcdef..."},
	} {
		if got := Truncate(tc.s, tc.limit); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
	}
	long := strings.Repeat("é", MaxMessageLength)
	got := TruncateMessage(long)
	if len(got) > MaxMessageLength || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("TruncateMessage: %d bytes, valid UTF-8 %t", len(got), utf8.ValidString(got))
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("abcdeé-xyz-more", 10)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit <= 3 || limit > 1<<20 {
			return
		}
		got := Truncate(s, limit)
		if len(got) > limit || (len(s) <= limit && got != s) || (utf8.ValidString(s) && !utf8.ValidString(got)) {
			t.Fatalf("Truncate(%q, %d) = %q", s, limit, got)
		}
	})
}
