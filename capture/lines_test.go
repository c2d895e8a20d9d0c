package capture

import (
	"strings"
	"testing"
)

func collect(max int, chunks ...string) (lines []string, cuts []bool, l *Lines) {
	l = &Lines{Max: max, Func: func(b []byte, cut bool) {
		lines = append(lines, string(b))
		cuts = append(cuts, cut)
	}}
	for _, c := range chunks {
		l.Write([]byte(c))
	}
	l.Flush()
	return lines, cuts, l
}

func TestLinesSplitsAcrossWrites(t *testing.T) {
	got, _, _ := collect(0, "a", "b\nc", "d\r\n\ne", "")
	want := []string{"ab", "cd", "", "e"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLinesCutsLongLinesAndCountsTheRest(t *testing.T) {
	long := strings.Repeat("x", 100)
	got, cuts, l := collect(10, long[:30], long[30:]+"\nshort\n")
	if len(got) != 2 || got[0] != long[:10] || !cuts[0] || got[1] != "short" || cuts[1] {
		t.Fatalf("got %q cuts %v", got, cuts)
	}
	if l.Skipped != 90 || l.Cut != 1 {
		t.Fatalf("skipped %d cut %d", l.Skipped, l.Cut)
	}
}

func TestLinesCutsALongLineWithinOneWrite(t *testing.T) {
	got, cuts, l := collect(4, "abcdefgh\nij\n")
	if len(got) != 2 || got[0] != "abcd" || !cuts[0] || got[1] != "ij" || l.Skipped != 4 {
		t.Fatalf("got %q cuts %v skipped %d", got, cuts, l.Skipped)
	}
}

func FuzzLinesNeverExceedsMax(f *testing.F) {
	f.Add([]byte("a\nbb\nccc"), 2, 1)
	f.Fuzz(func(t *testing.T, data []byte, max, chunk int) {
		if max <= 0 || max > 64 || chunk <= 0 {
			return
		}
		var total int
		l := &Lines{Max: max, Func: func(b []byte, cut bool) {
			if len(b) > max {
				t.Fatalf("line of %d bytes exceeds max %d", len(b), max)
			}
			total++
		}}
		for p := data; len(p) > 0; {
			k := min(chunk, len(p))
			l.Write(p[:k])
			p = p[k:]
		}
		l.Flush()
	})
}
