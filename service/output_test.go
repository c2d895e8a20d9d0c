package service

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBoundOutputKeepsHeadAndTailWithinTheBound(t *testing.T) {
	texts := []string{strings.Repeat("a", 5000), strings.Repeat("é", 5000), strings.Repeat("日本", 3000) + "\xff", "short"}
	for _, text := range texts {
		for _, max := range []int{1, 2, 10, 60, 61, 100, 1000, 4999, 100000} {
			got, cut := boundOutput(text, max)
			valid := strings.ToValidUTF8(text, "\uFFFD")
			switch {
			case len(got) > max && len(valid) > max:
				t.Fatalf("max %d: %d bytes", max, len(got))
			case !utf8.ValidString(got):
				t.Fatalf("max %d: invalid UTF-8", max)
			case cut != (len(valid) > max):
				t.Fatalf("max %d: cut %v for %d bytes", max, cut, len(valid))
			case !cut && got != valid:
				t.Fatalf("max %d: changed a text that fits", max)
			}
			if cut && max >= 100 {
				head, tail, ok := strings.Cut(got, "\n[... ")
				if !ok || !strings.HasPrefix(valid, head) || !strings.HasSuffix(valid, tail[strings.Index(tail, "]\n")+2:]) {
					t.Fatalf("max %d: %q is not a head and a tail", max, got)
				}
			}
		}
	}
}
