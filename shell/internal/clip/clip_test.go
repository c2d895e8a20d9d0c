package clip

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
)

func TestOutputKeepsHeadAndTailWithinBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 10000; i++ {
		b.WriteString("line of output é\n")
	}
	b.WriteString("FAILED: the error at the end\n")
	buf := capture.NewBuffer(1 << 20)
	buf.Write([]byte(b.String()))
	got := Output(buf.Output(), 1000, "/spill/file")
	if !got.Truncated || got.Approx {
		t.Fatalf("truncated=%v approx=%v", got.Truncated, got.Approx)
	}
	if !strings.HasPrefix(got.S, "line of output") || !strings.HasSuffix(got.S, "FAILED: the error at the end\n") {
		t.Errorf("head or tail lost: %q ... %q", got.S[:40], got.S[len(got.S)-40:])
	}
	if !strings.Contains(got.S, "characters omitted; full output in /spill/file") {
		t.Errorf("no marker: %q", got.S)
	}
	if n := utf8.RuneCountInString(got.S); n > 1100 {
		t.Errorf("%d characters for a budget of 1000", n)
	}
	if !utf8.ValidString(got.S) {
		t.Error("invalid UTF-8")
	}
}

func TestOutputOfCappedCaptureNeverSplitsRunes(t *testing.T) {
	buf := capture.NewBuffer(101) // odd halves cut inside "é"
	buf.Write([]byte(strings.Repeat("é", 5000)))
	got := Output(buf.Output(), 40, "")
	if !got.Truncated || !got.Approx || !utf8.ValidString(got.S) || strings.ContainsRune(got.S, '\uFFFD') {
		t.Errorf("got %+v", got)
	}
}

func TestOutputLeavesShortTextAlone(t *testing.T) {
	o := corral.Output{Head: []byte("hello\n"), Bytes: 6}
	if got := Output(o, 100, ""); got.S != "hello\n" || got.Truncated {
		t.Errorf("got %+v", got)
	}
}

func TestBudgetsGiveASmallStreamAllItNeeds(t *testing.T) {
	if a, b := Budgets(100000, 300, 1000); a != 700 || b != 300 {
		t.Errorf("got %d %d", a, b)
	}
	if a, b := Budgets(5000, 5000, 1000); a != 500 || b != 500 {
		t.Errorf("got %d %d", a, b)
	}
	if a, b := Budgets(10, 20, 1000); a != 10 || b != 20 {
		t.Errorf("got %d %d", a, b)
	}
}
