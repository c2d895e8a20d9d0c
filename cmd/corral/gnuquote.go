package main

import (
	"fmt"
	"os"
	"strings"
)

// gnuQuote quotes s for a message as GNU's quote() does in the locale
// style: 'like this' in the C locale, ‘like this’ in a UTF-8 one, with a
// backslash before the quote and backslash characters and C escapes for
// control characters.
func gnuQuote(s string) string {
	open, closing := "'", "'"
	if utf8Locale() {
		open, closing = "\u2018", "\u2019"
	}
	var b strings.Builder
	b.WriteString(open)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || (closing == "'" && c == '\''):
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			if e := strings.IndexByte("\a\b\f\n\r\t\v", c); e >= 0 {
				b.WriteByte('\\')
				b.WriteByte("abfnrtv"[e])
			} else {
				fmt.Fprintf(&b, "\\%03o", c)
			}
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(closing)
	return b.String()
}

// utf8Locale reports whether the locale in force for characters (LC_ALL,
// then LC_CTYPE, then LANG) uses UTF-8.
func utf8Locale() bool {
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if l := os.Getenv(v); l != "" {
			l = strings.ToLower(l)
			return strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
		}
	}
	return false
}
