package service

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// boundOutput returns text as valid UTF-8 within max bytes (invalid
// bytes, such as a rune cut by the capture's own head and tail, become
// U+FFFD first, as a JSON record would have them): whole when it fits,
// else its head and its tail with a line between them saying how many
// bytes were cut (the line counts toward max), each cut on a rune
// boundary. It reports whether it cut.
func boundOutput(text string, max int) (string, bool) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) <= max {
		return text, false
	}
	const format = "\n[... %d bytes cut here; the run's log has them ...]\n"
	room := max - len(fmt.Sprintf(format, 0)) - len(strconv.Itoa(len(text))) + 1
	if room < 2 {
		return text[:runeStart(text, max)], true
	}
	head := runeStart(text, room/2)
	tail := len(text) - (room - head)
	for tail < len(text) && !utf8.RuneStart(text[tail]) {
		tail++
	}
	return text[:head] + fmt.Sprintf(format, tail-head) + text[tail:], true
}

// runeStart returns the largest i <= n at which a rune of s starts.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
