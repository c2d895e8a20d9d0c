package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// maxHeld bounds what a Writer holds beyond its chunk and its longest
// registered value: the look-behind and the longest look-ahead of a rule.
const maxHeld = lookBehind + maxJWTHead + 64 + compactAt

// stream redacts in through a Writer, cut at the given offsets.
func stream(t testing.TB, r *Redactor, in []byte, cuts []int) []byte {
	var out bytes.Buffer
	w := r.Writer(&out)
	prev := 0
	for _, c := range append(cuts, len(in)) {
		if _, err := w.Write(in[prev:c]); err != nil {
			t.Fatal(err)
		}
		if held := len(w.buf); held > chunk+r.maxLen+maxHeld {
			t.Fatalf("holds %d bytes after a write (bound %d)", held, chunk+r.maxLen+maxHeld)
		}
		prev = c
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func allCases() string {
	var b strings.Builder
	for _, c := range redactCases {
		b.WriteString(c.in)
		b.WriteString("\n")
	}
	b.WriteString(claudeLines)
	return b.String()
}

func TestWriterMatchesOneShotWhateverTheSplits(t *testing.T) {
	r := New("hunter2hunter2", "service-token-123456")
	for _, c := range redactCases {
		in := []byte(c.in)
		want := r.String(c.in)
		for cut := 0; cut <= len(in); cut++ {
			if got := stream(t, r, in, []int{cut}); string(got) != want {
				t.Fatalf("%s, cut at %d:\ngot  %q\nwant %q", c.name, cut, got, want)
			}
		}
		bytewise := make([]int, len(in))
		for i := range bytewise {
			bytewise[i] = i
		}
		if got := stream(t, r, in, bytewise); string(got) != want {
			t.Fatalf("%s, byte by byte:\ngot  %q\nwant %q", c.name, got, want)
		}
	}
	in := []byte(allCases())
	want := r.String(string(in))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		if got := stream(t, r, in, randomCuts(rng, len(in))); string(got) != want {
			t.Fatalf("all cases, random cuts:\ngot  %q\nwant %q", got, want)
		}
	}
}

func randomCuts(rng *rand.Rand, n int) []int {
	var cuts []int
	for at := 0; ; {
		at += 1 + rng.IntN(64)
		if at >= n {
			return cuts
		}
		cuts = append(cuts, at)
	}
}

func TestWriterHoldsLittleOnLongInput(t *testing.T) {
	r := New("hunter2hunter2")
	long := func(unit string, n int) []byte { return bytes.Repeat([]byte(unit), n/len(unit)) }
	for name, in := range map[string][]byte{
		"text":            long("the quick brown fox: jumps=over the lazy dog\n", 1<<20),
		"one long line":   long("abc def ", 1<<20),
		"one long word":   long("a", 1<<20),
		"long token":      append([]byte("sk-"), long("a", 1<<20)...),
		"long quoted":     append([]byte(`password: "`), long("a", 1<<20)...),
		"long key body":   append([]byte("-----BEGIN PRIVATE KEY-----\n"), long("MIIE\n", 1<<20)...),
		"registered runs": long("hunter2hunter2", 1<<20),
	} {
		out := stream(t, r, in, randomCuts(rand.New(rand.NewPCG(3, 4)), len(in)))
		if want := r.Bytes(in); !bytes.Equal(out, want) {
			t.Errorf("%s: the stream differs from the one-shot result", name)
		}
	}
}

func TestLinesComeBackAtOnce(t *testing.T) {
	var got []string
	l := New("hunter2hunter2").Lines(func(line []byte) { got = append(got, string(line)) })
	in := []string{"start", "pw=hunter2hunter2 and ghp_abcdefghijklmnopqrstuvwxyz0123456789", "key:"}
	in = append(in, strings.Split(rsaKey, "\n")...)
	in = append(in, "done", "")
	want := []string{"start", "pw=[REDACTED] and [REDACTED]", "key:", "[REDACTED]", "done", ""}
	for i, line := range in {
		l.Line([]byte(line))
		inKey := i > 2 && i < len(in)-2
		if !inKey && (len(got) == 0 || got[len(got)-1] != want[len(got)-1]) {
			t.Fatalf("after line %d (%q) got %q", i, line, got)
		}
	}
	l.Close()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}

	// A block that never ends comes back, masked, at Close.
	got = nil
	l = New().Lines(func(line []byte) { got = append(got, string(line)) })
	l.Line([]byte("-----BEGIN PRIVATE KEY-----"))
	l.Line([]byte("MIIE"))
	l.Close()
	if strings.Join(got, "|") != "[REDACTED]" {
		t.Fatalf("open block at close: %q", got)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFull }

var errFull = bytes.ErrTooLarge

func TestWriterReportsItsWriterFailing(t *testing.T) {
	w := New().Writer(failWriter{})
	if _, err := w.Write([]byte("line\n")); err != errFull {
		t.Fatalf("write: %v", err)
	}
	if _, err := w.Write([]byte("more\n")); err != errFull {
		t.Fatalf("later write: %v", err)
	}
	if err := w.Close(); err != errFull {
		t.Fatalf("close: %v", err)
	}
	if _, err := w.Write([]byte("x")); err != ErrClosed {
		t.Fatalf("write after close: %v", err)
	}
}

// FuzzWriter checks, for any text, registered value and split, that the
// Writer neither panics nor holds more than its bound, that it gives what
// the one-shot redaction gives, and that a registered value never comes
// through.
func FuzzWriter(f *testing.F) {
	for _, c := range redactCases {
		f.Add([]byte(c.in), "hunter2hunter2", uint64(len(c.in)))
	}
	f.Add([]byte(rsaKey), "MIIBOgIBAAJBAKj34", uint64(7))
	f.Add([]byte(claudeLines), "session_id", uint64(99))
	f.Fuzz(func(t *testing.T, text []byte, secret string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		// The secret goes in somewhere, perhaps twice.
		in := append([]byte(nil), text[:rng.IntN(len(text)+1)]...)
		in = append(in, secret...)
		in = append(in, text[len(in)-len(secret):]...)
		if rng.IntN(2) == 0 {
			in = append(in, secret...)
		}
		r := New(secret)
		want := r.Bytes(in)
		got := stream(t, r, in, randomCuts(rng, len(in)))
		if !bytes.Equal(got, want) {
			t.Fatalf("stream and one-shot differ for %q:\nstream   %q\none-shot %q", in, got, want)
		}
		// A value holding a bracket could be rebuilt from a Mask's edge.
		if len(secret) >= MinValueLen && !strings.ContainsAny(secret, "[]") && bytes.Contains(got, []byte(secret)) {
			t.Fatalf("registered %q came through: %q", secret, got)
		}
	})
}
