package snapshot

import (
	"errors"
	"strconv"
	"strings"
)

// decl is one line of `declare -p` output.
type decl struct {
	flags    string // without the dash: "-", "x", "ax", "ir"...
	name     string
	raw      string // the whole declaration, without its newline
	value    string // unquoted, for scalars
	hasValue bool
}

// parseDeclarations reads the output of bash's `declare -p`: lines of the
// form `declare -FLAGS NAME[=VALUE]`, where a scalar VALUE is "double
// quoted" (bash escapes ", \, $ and `) or $'ANSI-C quoted', and an array
// VALUE is (...) holding quoted elements. A double-quoted value may hold
// raw newlines (older bash does that), so lines are found by quotes.
func parseDeclarations(s string) ([]decl, error) {
	var out []decl
	for len(s) > 0 {
		if s[0] == '\n' {
			s = s[1:]
			continue
		}
		rest, ok := strings.CutPrefix(s, "declare -")
		if !ok {
			return out, errors.New("not a declare line")
		}
		var d decl
		sp := strings.IndexByte(rest, ' ')
		if sp < 0 {
			return out, errors.New("truncated declare line")
		}
		d.flags, rest = rest[:sp], rest[sp+1:]
		end := strings.IndexAny(rest, "=\n")
		if end < 0 {
			end = len(rest)
		}
		d.name = rest[:end]
		n := len(s) - len(rest) + end // bytes of s consumed so far
		if end < len(rest) && rest[end] == '=' {
			d.hasValue = true
			v, used, err := value(rest[end+1:])
			if err != nil {
				return out, err
			}
			d.value = v
			n += 1 + used
		}
		d.raw = s[:n]
		s = s[n:]
		out = append(out, d)
	}
	return out, nil
}

// value reads one value up to its end of line; it returns the unquoted
// scalar (empty for arrays) and how many bytes it used.
func value(s string) (string, int, error) {
	i := 0
	var b strings.Builder
	depth := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' && depth == 0:
			return b.String(), i, nil
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case c == '"':
			j, v, err := dquoted(s, i+1)
			if err != nil {
				return "", 0, err
			}
			b.WriteString(v)
			i = j
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			j, v, err := ansiC(s, i+2)
			if err != nil {
				return "", 0, err
			}
			b.WriteString(v)
			i = j
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", 0, errors.New("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), i, nil
}

// dquoted reads a double-quoted string starting after its quote; it
// returns the index after the closing quote.
func dquoted(s string, i int) (int, string, error) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			return i + 1, b.String(), nil
		case '\\':
			if i+1 < len(s) {
				switch n := s[i+1]; n {
				case '"', '\\', '$', '`':
					b.WriteByte(n)
					i += 2
					continue
				case '\n':
					i += 2
					continue
				}
			}
		}
		b.WriteByte(c)
		i++
	}
	return 0, "", errors.New("unterminated double quote")
}

// ansiC reads a $'...' string starting after its quote.
func ansiC(s string, i int) (int, string, error) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		if c == '\'' {
			return i + 1, b.String(), nil
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i < len(s) {
				b.WriteByte(s[i] & 0x1f)
				i++
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i
			for j < len(s) && j-i < max && isHex(s[j]) {
				j++
			}
			if j == i {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			v, _ := strconv.ParseUint(s[i:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteString(string(rune(v)))
			}
			i = j
		default:
			if e >= '0' && e <= '7' {
				j := i - 1
				for j < len(s) && j-(i-1) < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i-1:j], 8, 16)
				b.WriteByte(byte(v))
				i = j
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return 0, "", errors.New("unterminated $' quote")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
