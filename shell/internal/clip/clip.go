// Package clip cuts captured output down to a budget of characters for a
// model: it keeps the head and the tail (where failures usually are), cuts
// at line ends when one is near, never splits a UTF-8 sequence, and says
// how much it left out.
package clip

import (
	"strings"
	"unicode/utf8"

	"github.com/corralrun/corral"
)

// Text is what is shown of one stream.
type Text struct {
	S         string
	Truncated bool
	// Omitted counts the characters left out; Approx reports that some of
	// them were dropped by the byte-capped capture and were counted in
	// bytes.
	Omitted int64
	Approx  bool
}

// Size estimates the characters of o (its kept text in runes plus the bytes
// the capture dropped).
func Size(o corral.Output) int64 {
	return int64(utf8.RuneCount(o.Head)+utf8.RuneCount(o.Tail)) + o.Dropped()
}

// Budgets splits max characters between two streams of the given sizes:
// a stream that fits in half keeps everything, the other gets the rest.
func Budgets(a, b int64, max int) (int, int) {
	m := int64(max)
	switch {
	case a+b <= m:
		return int(a), int(b)
	case a <= m/2:
		return int(a), int(m - a)
	case b <= m/2:
		return int(m - b), int(b)
	}
	return max / 2, max - max/2
}

// Output cuts o to at most budget characters (plus the marker line).
func Output(o corral.Output, budget int, spill string) Text {
	head := strings.ToValidUTF8(trimRight(o.Head), "\uFFFD")
	tail := strings.ToValidUTF8(trimLeft(o.Tail), "\uFFFD")
	hn, tn := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
	if !o.Truncated {
		s := strings.ToValidUTF8(string(o.Head)+string(o.Tail), "\uFFFD")
		n := utf8.RuneCountInString(s)
		if n <= budget {
			return Text{S: s}
		}
		head, tail, hn, tn = s, s, n, n
		h := budget / 2
		hs, ts := firstRunes(head, h), lastRunes(tail, budget-h)
		return mark(hs, ts, int64(n-utf8.RuneCountInString(hs)-utf8.RuneCountInString(ts)), false, spill)
	}
	h := budget / 2
	hs, ts := firstRunes(head, h), lastRunes(tail, budget-h)
	omitted := int64(hn-utf8.RuneCountInString(hs)) + int64(tn-utf8.RuneCountInString(ts)) + o.Dropped() +
		int64(len(o.Head)-len(trimRight(o.Head))) + int64(len(o.Tail)-len(trimLeft(o.Tail)))
	return mark(hs, ts, omitted, true, spill)
}

func mark(head, tail string, omitted int64, approx bool, spill string) Text {
	var b strings.Builder
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("[... ")
	if approx {
		b.WriteString("about ")
	}
	b.WriteString(itoa(omitted))
	b.WriteString(" characters omitted")
	if spill != "" {
		b.WriteString("; full output in ")
		b.WriteString(spill)
	}
	b.WriteString(" ...]\n")
	b.WriteString(tail)
	return Text{S: b.String(), Truncated: true, Omitted: omitted, Approx: approx}
}

// firstRunes returns the first n runes of s, cut after the last newline in
// its final fifth when there is one.
func firstRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i, k := 0, 0
	for i < len(s) && k < n {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		k++
	}
	out := s[:i]
	if i < len(s) {
		if nl := strings.LastIndexByte(out, '\n'); nl >= 0 && nl >= len(out)*4/5 {
			out = out[:nl+1]
		}
	}
	return out
}

// lastRunes returns the last n runes of s, started after the first newline
// in its first fifth when there is one.
func lastRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i, k := len(s), 0
	for i > 0 && k < n {
		_, w := utf8.DecodeLastRuneInString(s[:i])
		i -= w
		k++
	}
	out := s[i:]
	if i > 0 {
		if nl := strings.IndexByte(out, '\n'); nl >= 0 && nl < len(out)/5 {
			out = out[nl+1:]
		}
	}
	return out
}

// trimRight drops an incomplete UTF-8 sequence at the end of b (where the
// capture cut it).
func trimRight(b []byte) string {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 { // lead byte: complete only if its sequence fits
			if need := seqLen(c); need > k {
				return string(b[:len(b)-k])
			}
			break
		}
	}
	return string(b)
}

// trimLeft drops continuation bytes at the start of b.
func trimLeft(b []byte) string {
	i := 0
	for i < len(b) && i < 3 && b[i]&0xC0 == 0x80 {
		i++
	}
	return string(b[i:])
}

func seqLen(c byte) int {
	switch {
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	}
	return 2
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
