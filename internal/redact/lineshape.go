package redact

// The shapes of name: value that colonValue takes for an assignment: a
// name that begins a line, and a value that looks like one.

// lineCtx is what the line a name begins is part of; it says where the
// name's value ends.
type lineCtx uint8

const (
	plainLine    lineCtx = iota // a line of text: a blank or a line break ends the value
	singleQuoted                // a '-quoted string: its closing quote too
	jsonString                  // a "-quoted string, or text inside a JSON string: '"' and '\' too
)

// lineWord holds, by context, the bytes a value that ends a line is made
// of (made by makeTables).
var lineWord [3]*set

// startsLine reports whether the name at b[j] begins a line: only blanks
// and at most one marker (a YAML list's or a comment's, a diff's + or -,
// curl -v's > or <) stand between it and a line break, an escaped one
// ("\n" inside a JSON string), or the start of the stream; or it opens a
// quoted string. It looks back at most 2*maxSpaces+3 bytes: with the name
// and its separator, within lookBehind, so reaching b[0] means the start
// of the stream (the Writer keeps lookBehind bytes before the position).
func startsLine(b []byte, j int) (lineCtx, bool) {
	if j > 0 {
		switch b[j-1] {
		case '\'':
			return singleQuoted, true
		case '"':
			return jsonString, true
		}
	}
	k := j - back(b, j, blank, maxSpaces)
	if k > 0 && lineMarker[b[k-1]] {
		k--
		k -= back(b, k, blank, maxSpaces)
	}
	switch {
	case k == 0, b[k-1] == '\n', b[k-1] == '\r':
		return plainLine, true
	case k >= 2 && b[k-2] == '\\' && (b[k-1] == 'n' || b[k-1] == 'r'):
		return jsonString, true
	}
	return 0, false
}

// back counts the bytes of set just before b[j], up to limit.
func back(b []byte, j int, set *set, limit int) int {
	k := 0
	for k < limit && j-k > 0 && set[b[j-k-1]] {
		k++
	}
	return k
}

// lineValue masks the value of a name that begins a line, b[v] on after
// blanks: a quoted string, or one word (bare's exceptions aside) that
// ends the line or the quoted string the line is in, a comment aside.
// Anything more on the line makes it prose: "Token: No such file".
func lineValue(b []byte, v int, eof bool, ctx lineCtx) match {
	k, atEnd := run(b, v, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	v += k
	switch c := b[v]; {
	case ctx == jsonString && c == '"', ctx == singleQuoted && c == '\'':
		return match{} // the string ends with no value
	case c == '"' || c == '\'' || c == '\\':
		return value(b, v, eof, true, false)
	}
	set := lineWord[ctx]
	n, atEnd := run(b, v, set, maxBare)
	switch {
	case n == maxBare:
		return opened(v, v+n, modeToken, set, 0)
	case atEnd && !eof:
		return match{v: need}
	case n == 0 || notValue(b[v:v+n]):
		return match{}
	}
	switch endsLine(b, v+n, eof, ctx) {
	case need:
		return match{v: need}
	case hit:
		return closed(v, v+n)
	}
	return match{}
}

// endsLine says whether the line (or the quoted string) ends at b[e],
// after blanks and but for a comment.
func endsLine(b []byte, e int, eof bool, ctx lineCtx) verdict {
	s, atEnd := run(b, e, blank, maxSpaces)
	switch {
	case atEnd && !eof:
		return need
	case atEnd, s == maxSpaces:
		return hit
	}
	p := e + s
	switch c := b[p]; {
	case c == '\n', c == '\r', c == '#' && s > 0,
		ctx == singleQuoted && c == '\'', ctx == jsonString && c == '"':
		return hit
	case ctx == jsonString && c == '\\':
		if p+1 == len(b) {
			if eof {
				return miss
			}
			return need
		}
		if n := b[p+1]; n == 'n' || n == 'r' || n == '"' {
			return hit
		}
	}
	return miss
}

// notValue reports whether a bare word names a value rather than holds
// one: a reference ($TOKEN, ${TOKEN}, $(cat token)) or a keyword.
func notValue(w []byte) bool {
	return w[0] == '$' || oneOf(w, notValues)
}

var notValues = []string{"null", "nil", "none", "true", "false", "undefined", "~"}

// authSchemes are the HTTP authentication schemes that make an
// Authorization: inside a line a header.
var authSchemes = []string{"basic", "bearer", "digest", "negotiate", "ntlm", "aws4-hmac-sha256"}

// schemed masks an Authorization header's value inside a line, b[v] on,
// when it is an authentication scheme and a credential: "authorization:
// Basic dXNlcjpwYXNz" is one, "authorization: basic auth failed" is not.
func schemed(b []byte, v int, eof bool) match {
	k, atEnd := run(b, v, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	s := v + k
	n, atEnd := run(b, s, schemeBytes, maxScheme)
	if atEnd {
		return needOr(eof)
	}
	if n == maxScheme || !blank[b[s+n]] || !oneOf(b[s:s+n], authSchemes) {
		return match{}
	}
	t, atEnd := run(b, s+n, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	c := s + n + t
	m, atEnd := run(b, c, bearerBytes, maxBare)
	if atEnd && !eof && m < maxBare {
		return match{v: need}
	}
	if m < maxBare && !credentialLike(b[c:c+m]) {
		return match{}
	}
	return value(b, v, eof, false, true)
}

// credentialLike reports whether a word could be a credential rather
// than a word of prose: 8 bytes or more, with a digit, an upper-case
// letter after its first byte, or base64's + / =.
func credentialLike(w []byte) bool {
	if len(w) < 8 {
		return false
	}
	for i, c := range w {
		if c >= '0' && c <= '9' || i > 0 && isUpper(c) || c == '+' || c == '/' || c == '=' {
			return true
		}
	}
	return false
}

// oneOf reports whether w is one of the lower-case words, in any case.
func oneOf(w []byte, words []string) bool {
	for _, x := range words {
		if equalFold(w, x) {
			return true
		}
	}
	return false
}
