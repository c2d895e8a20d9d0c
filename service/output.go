package service

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// boundOutput returns text within max bytes: whole when it fits, else its
// head and its tail with a line between them saying how many bytes were
// cut (the line counts toward max), each cut on a UTF-8 boundary. It
// reports whether it cut.
func boundOutput(text string, max int) (string, bool) {
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
