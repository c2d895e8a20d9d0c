// Package jsonscan reads the few fields a caller needs out of a JSON object
// without decoding the rest: it walks the members of an object (or the
// elements of an array) and hands out each value as raw bytes, skipping
// nested values by matching brackets outside strings.
//
// It is lenient by design. Values the caller does not read are only
// delimited, not validated (a malformed number inside a skipped value goes
// unnoticed), and a value cut off by the end of the input is still handed
// out, marked by ErrTruncated, so that a line cut at a length bound can be
// read up to the cut. It never panics and never allocates while skipping.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

var (
	// ErrTruncated reports that the input ended inside a value. The members
	// before it were reported, and so was the partial value.
	ErrTruncated = errors.New("jsonscan: input ends inside a value")

	// ErrSyntax reports input that is not JSON where a structural character
	// was expected.
	ErrSyntax = errors.New("jsonscan: syntax error")
)

// Members calls f with the key and the raw value of each member of the JSON
// object data, in order, until f returns false. The key is the raw key
// between its quotes (escapes are not decoded: the keys callers look for
// have none). Leading and trailing white space is allowed.
//
// When data ends inside a value, f is called with what there is of it and
// Members returns ErrTruncated. Any other malformation returns ErrSyntax.
func Members(data []byte, f func(key, val []byte) bool) error {
	i, err := open(data, '{')
	for first := true; err == nil; first = false {
		var done bool
		if i, done, err = nextItem(data, i, '}', first); done || err != nil {
			return err
		}
		if data[i] != '"' {
			return ErrSyntax
		}
		end, serr := skipString(data, i)
		if serr != nil {
			return serr
		}
		key := data[i+1 : end-1]
		if i, err = expect(data, end, ':'); err != nil {
			return err
		}
		if i, err = value(data, i, func(val []byte) bool { return f(key, val) }); i < 0 {
			return err
		}
	}
	return err
}

// Elements calls f with each raw element of the JSON array data until f
// returns false. Truncation and syntax errors are reported as by Members.
func Elements(data []byte, f func(val []byte) bool) error {
	i, err := open(data, '[')
	for first := true; err == nil; first = false {
		var done bool
		if i, done, err = nextItem(data, i, ']', first); done || err != nil {
			return err
		}
		if i, err = value(data, i, f); i < 0 {
			return err
		}
	}
	return err
}

// open returns the index just past the opening bracket that must start data.
func open(data []byte, bracket byte) (int, error) {
	i := skipSpace(data, 0)
	if i >= len(data) {
		return i, ErrTruncated
	}
	if data[i] != bracket {
		return i, ErrSyntax
	}
	return i + 1, nil
}

// nextItem moves from i, just past the opening bracket or the previous item,
// to the start of the next item of a container closed by closer. done reports
// the closing bracket, with err telling whether only white space follows it.
func nextItem(data []byte, i int, closer byte, first bool) (next int, done bool, err error) {
	i = skipSpace(data, i)
	if i >= len(data) {
		return i, false, ErrTruncated
	}
	if data[i] == closer {
		return i, true, trailing(data, i+1)
	}
	if first {
		return i, false, nil
	}
	i, err = expect(data, i, ',')
	return i, false, err
}

// expect checks for the structural character c at data[i] (after white
// space) and returns the index of what follows it, past white space.
func expect(data []byte, i int, c byte) (int, error) {
	i = skipSpace(data, i)
	if i >= len(data) {
		return i, ErrTruncated
	}
	if data[i] != c {
		return i, ErrSyntax
	}
	i = skipSpace(data, i+1)
	if i >= len(data) {
		return i, ErrTruncated
	}
	return i, nil
}

// value hands the value at data[i] to f and returns the index past it. A
// negative index ends the walk: f asked to stop (err nil), the value was cut
// off (f saw what there was of it; err ErrTruncated) or malformed.
func value(data []byte, i int, f func(val []byte) bool) (int, error) {
	end, err := Skip(data, i)
	if err == ErrTruncated {
		f(data[i:])
		return -1, err
	}
	if err != nil {
		return -1, err
	}
	if !f(data[i:end]) {
		return -1, nil
	}
	return end, nil
}

// trailing accepts only white space after the closing bracket at i-1.
func trailing(data []byte, i int) error {
	if skipSpace(data, i) != len(data) {
		return ErrSyntax
	}
	return nil
}

// Skip returns the index just past the value that starts at data[i].
func Skip(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, ErrTruncated
	}
	switch c := data[i]; c {
	case '"':
		return skipString(data, i)
	case '{', '[':
		return skipContainer(data, i)
	default:
		// A literal or a number: runs to the next delimiter.
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return i, ErrSyntax
				}
				return j, nil
			case '{', '[', '"', ':':
				return i, ErrSyntax
			}
			j++
		}
		return j, ErrTruncated
	}
}

// skipString returns the index just past the string whose opening quote is
// at data[i].
func skipString(data []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data), ErrTruncated
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for b := j - 1; b > i && data[b] == '\\'; b-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

// skipContainer returns the index just past the object or array that opens
// at data[i], matching brackets outside strings.
func skipContainer(data []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			end, err := skipString(data, j)
			if err != nil {
				return end, err
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
			if depth < 0 {
				return j, ErrSyntax
			}
		}
	}
	return len(data), ErrTruncated
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// String decodes a raw JSON string value. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does. It reports false when raw is not a complete string.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		if utf8.Valid(body) {
			return string(body), true
		}
		return string(bytes.ToValidUTF8(body, []byte("\uFFFD"))), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// StringPrefix decodes at most max bytes of a raw JSON string value, which
// may be cut off (a partial value from a truncated input). It reports
// whether the result is the whole string.
func StringPrefix(raw []byte, max int) (s string, whole bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if end, err := skipString(raw, 0); err == nil && end == len(raw) && len(raw)-2 <= max {
		s, ok := String(raw)
		return s, ok
	}
	body := raw[1:]
	if end, err := skipString(raw, 0); err == nil {
		body = raw[1 : end-1]
	}
	if len(body) > max {
		body = body[:max]
	}
	// Drop a dangling escape at the cut, then decode what is left.
	for k := 0; k < 6 && k < len(body); k++ {
		if body[len(body)-1-k] == '\\' {
			n := 0
			for b := len(body) - 1 - k; b >= 0 && body[b] == '\\'; b-- {
				n++
			}
			if n%2 == 1 {
				body = body[:len(body)-1-k]
			}
			break
		}
	}
	q := make([]byte, 0, len(body)+2)
	q = append(q, '"')
	q = append(q, body...)
	q = append(q, '"')
	if s, ok := String(q); ok {
		return s, false
	}
	return string(bytes.ToValidUTF8(body, []byte("\uFFFD"))), false
}

// Int decodes a raw JSON number as an int64; a float is truncated.
func Int(raw []byte) (int64, bool) {
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return int64(f), true
	}
	return 0, false
}

// Float decodes a raw JSON number.
func Float(raw []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// Bool decodes a raw JSON boolean.
func Bool(raw []byte) (v, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNull reports whether raw is the literal null.
func IsNull(raw []byte) bool { return string(raw) == "null" }
