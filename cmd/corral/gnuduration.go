package main

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// forever is a duration too long to wait for: GNU timeout accepts any
// length (inf, 1e400, 2.34e+5d) and treats what its clock cannot hold as
// the longest wait it can; here that is no deadline at all.
const forever = time.Duration(math.MaxInt64)

var errInvalidInterval = errors.New("invalid time interval")

// parseGNUDuration reads a duration as GNU timeout does: a floating point
// number as C's strtod reads it (leading blanks, a sign, decimal or
// hexadecimal digits, an exponent, inf, infinity), then at most one
// suffix: s (the default), m, h or d. Zero means no timeout; a value that
// underflows to zero is the smallest positive one (1 ns); a negative
// value, a NaN or anything else after the number is an error. Lengths
// beyond what a time.Duration holds (292 years) are forever.
func parseGNUDuration(s string) (time.Duration, error) {
	num, rest := strtodPrefix(s)
	if num == "" || len(rest) > 1 {
		return 0, errInvalidInterval
	}
	v, underflow, err := parseStrtod(num)
	if err != nil || math.IsNaN(v) || v < 0 || (v == 0 && underflow && math.Signbit(v)) {
		return 0, errInvalidInterval
	}
	mult := 1.0
	if rest != "" {
		switch rest[0] {
		case 's':
		case 'm':
			mult = 60
		case 'h':
			mult = 3600
		case 'd':
			mult = 86400
		default:
			return 0, errInvalidInterval
		}
	}
	if v == 0 && !underflow {
		return 0, nil
	}
	// Round up to the next nanosecond, as GNU rounds up to its clock's.
	ns := math.Ceil(v * mult * 1e9)
	if ns >= math.MaxInt64 {
		return forever, nil
	}
	return max(time.Duration(ns), 1), nil
}

// strtodPrefix splits s into the longest prefix strtod would read as a
// number (without its leading blanks) and the rest.
func strtodPrefix(s string) (num, rest string) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	body := s[i:]
	lower := strings.ToLower(body)
	switch {
	case strings.HasPrefix(lower, "infinity"):
		return s[start : i+8], s[i+8:]
	case strings.HasPrefix(lower, "inf"):
		return s[start : i+3], s[i+3:]
	case strings.HasPrefix(lower, "nan"):
		return s[start : i+3], s[i+3:]
	}
	hex := strings.HasPrefix(lower, "0x") && len(body) > 2 && isDigitIn(body[2], true)
	if hex || (strings.HasPrefix(lower, "0x.") && len(body) > 3 && isDigitIn(body[3], true)) {
		hex = true
		i += 2
	}
	digits := 0
	for i < len(s) && isDigitIn(s[i], hex) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigitIn(s[i], hex) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return "", s
	}
	i = exponentEnd(s, i, hex)
	return s[start:i], s[i:]
}

// exponentEnd returns where an exponent starting at s[i] ends (e or E for
// decimals, p or P for hexadecimals), or i when there is none.
func exponentEnd(s string, i int, hex bool) int {
	if i >= len(s) || !strings.ContainsRune(map[bool]string{false: "eE", true: "pP"}[hex], rune(s[i])) {
		return i
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return i
	}
	return k
}

func isDigitIn(c byte, hex bool) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	return hex && (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// parseStrtod converts what strtodPrefix found, and reports whether a
// non-zero number underflowed to zero (strtod's ERANGE).
func parseStrtod(num string) (v float64, underflow bool, err error) {
	lower := strings.ToLower(num)
	if strings.Contains(lower, "0x") && !strings.Contains(lower, "p") {
		num += "p0" // strtod's hexadecimals need no exponent; Go's do
	}
	v, err = strconv.ParseFloat(num, 64)
	var ne *strconv.NumError
	if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		err = nil // ±Inf: as long as it is
	}
	if err == nil && v == 0 {
		underflow = hasNonZeroMantissa(lower)
	}
	return v, underflow, err
}

// hasNonZeroMantissa reports whether a number's digits (before any
// exponent) are not all zeros.
func hasNonZeroMantissa(lower string) bool {
	s := strings.TrimLeft(lower, "+-")
	hex := strings.HasPrefix(s, "0x")
	if hex {
		s = s[2:]
	}
	for _, c := range s {
		switch {
		case c == '.':
		case (c == 'e' && !hex) || c == 'p':
			return false
		case c != '0':
			return true
		}
	}
	return false
}
