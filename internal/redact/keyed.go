package redact

// keyed masks the value given to a secret-looking name (SecretName) with
// '=' or ':' at b[i]: NAME=value and name := value anywhere, "name":
// "value" (and the same escaped inside a JSON string, \"name\": \"value\"),
// and name: value where a colon has an assignment's shape (colonValue).
// A quoted name (a JSON key) only has its string values masked, never a
// number, an object or null, so JSON stays JSON. "://" starts a URL
// instead.
func keyed(b []byte, i int, eof bool) match {
	if i+1 == len(b) {
		return needOr(eof)
	}
	c, next := b[i], b[i+1]
	switch {
	case c == ':' && next == '/':
		return userinfo(b, i, eof)
	case c == ':' && next == ':', c == '=' && next == '=':
		return match{}
	case c == '=' && i > 0 && (b[i-1] == '=' || b[i-1] == '!' || b[i-1] == '<' || b[i-1] == '>'):
		return match{}
	}
	j := i
	for k := 0; k < maxSpaces && j > 0 && blank[b[j-1]]; k++ {
		j--
	}
	quoted := j > 0 && (b[j-1] == '"' || b[j-1] == '\'')
	if quoted {
		j--
		if j > 0 && b[j-1] == '\\' {
			j--
		}
	}
	end := j
	for j > 0 && end-j < maxName && nameBytes[b[j-1]] {
		j--
	}
	if j == end || !secretName(b[j:end]) {
		return match{}
	}
	header := headerName(b[j:end])
	switch {
	case quoted:
		return value(b, i+1, eof, true, false)
	case c == '=':
		return value(b, i+1, eof, false, header)
	case next == '=': // name := value
		return value(b, i+2, eof, false, false)
	}
	return colonValue(b, j, i+1, eof, header)
}

// value masks the value starting at b[v] after blanks: a quoted string
// to its closing quote, or a bare word (bare); a header's to the end of
// its line.
func value(b []byte, v int, eof, onlyQuoted, header bool) match {
	k, atEnd := run(b, v, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	v += k
	switch q := b[v]; {
	case q == '\\':
		if v+1 == len(b) {
			return needOr(eof)
		}
		if b[v+1] == '"' {
			return opened(v+2, v+2, modeEscQuoted, nil, 0)
		}
		return match{}
	case q == '"' || q == '\'':
		return opened(v+1, v+1, modeQuoted, nil, q)
	case onlyQuoted:
		return match{}
	case header:
		return opened(v, v, modeHeader, nil, 0)
	}
	return bare(b, v, eof)
}

// bare masks a value given without quotes, b[v] on: a word up to
// valueStop. What only names or computes a value holds no secret and is
// kept: a reference ($TOKEN, ${TOKEN}, $(cat token)), a call or an index
// (get_token(user), os.environ["TOKEN"]: the word runs into '(' or '['),
// a keyword (null, None, true, ...). A word longer than maxBare is
// masked to its end, however it goes on.
func bare(b []byte, v int, eof bool) match {
	k, atEnd := run(b, v, valueWord, maxBare)
	switch {
	case k == maxBare:
		return opened(v, v+k, modeUnquoted, nil, 0)
	case atEnd && !eof:
		return match{v: need}
	case k == 0, !atEnd && (b[v+k] == '(' || b[v+k] == '['), notValue(b[v : v+k]):
		return match{}
	}
	return closed(v, v+k)
}

// flag masks the value of a secret-looking command-line option given as
// a separate argument (--password VALUE, -token 'VALUE'); --name=VALUE is
// keyed's.
func flag(b []byte, i int, eof bool) match {
	if i > 0 && !argStart[b[i-1]] {
		return match{}
	}
	n := i + 1
	if n < len(b) && b[n] == '-' {
		n++
	}
	k, atEnd := run(b, n, flagName, maxName)
	if atEnd {
		return needOr(eof)
	}
	if k == 0 || k == maxName || !blank[b[n+k]] || !secretName(b[n:n+k]) {
		return match{}
	}
	v := n + k
	s, atEnd := run(b, v, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	if b[v+s] == '-' {
		return match{} // another option: the flag takes no value
	}
	return value(b, v, eof, false, false)
}

// userinfo masks the password of a URL (scheme://user:password@host);
// b[i] is the ':' of "://".
func userinfo(b []byte, i int, eof bool) match {
	if len(b)-i < 3 {
		return needOr(eof)
	}
	if b[i+2] != '/' {
		return match{}
	}
	colon := -1
	for k := i + 3; k < i+3+maxURLUser; k++ {
		if k == len(b) {
			return needOr(eof)
		}
		switch c := b[k]; {
		case c == '@':
			if colon < 0 {
				return match{}
			}
			return closed(colon+1, k)
		case c == ':' && colon < 0:
			colon = k
		case urlUserStop[c]:
			return match{}
		}
	}
	return match{}
}
