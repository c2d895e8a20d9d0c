package redact

// shapes finds secrets by their shape or by the name they are given to:
// well-known tokens at the start of a word, values after a secret-looking
// name and a separator, passwords in URLs, bearer tokens. Every rule
// decides within a bounded look-ahead (maxAhead) and looks back at most
// lookBehind bytes, so the same spans are found whatever the writes.
type shapes struct {
	pos     int64 // next byte to look at
	openAt  int64 // start of the span being read, or -1
	mode    mode  // how the open span goes on
	set     *set  // modeToken: the token's bytes
	quote   byte  // modeQuoted: the closing quote
	bs      bool  // modeQuoted: an unpaired backslash was just read
	awsNear int64 // a secret key starting before this is next to an access key id
}

// mode says where an open span ends.
type mode uint8

const (
	modeToken     mode = iota + 1 // at the first byte outside set
	modeQuoted                    // at the closing quote (or a line break)
	modeEscQuoted                 // a \"-quoted value inside a JSON string: at a backslash
	modeUnquoted                  // at a space, a quote or punctuation
	modeHeader                    // at the end of the line or of the quoted header
)

const (
	lookBehind = 192 // a name before its separator (maxName, quotes, spaces) and what begins its line
	maxName    = 128
	maxSpaces  = 16
	maxJWTHead = 512
	maxURLUser = 256
	maxBare    = 256 // a bare value's look-ahead: a longer one is masked to its end
	maxScheme  = 24
	awsNearby  = 256 // how far after an access key id its secret key is looked for
)

// match is what a rule found at a position.
type match struct {
	v        verdict
	from, to int  // the span, relative to the buffer; to < 0: it stays open
	next     int  // where scanning goes on
	mode     mode // how an open span goes on
	set      *set
	quote    byte
}

type verdict uint8

const (
	miss verdict = iota
	need         // more bytes are needed to decide
	hit
)

func closed(from, to int) match { return match{v: hit, from: from, to: to, next: to} }

// opened is a span from from whose end is found from next on.
func opened(from, next int, m mode, s *set, q byte) match {
	return match{v: hit, from: from, to: -1, next: next, mode: m, set: s, quote: q}
}

// needOr is need unless the stream has ended (then the rule misses).
func needOr(eof bool) match {
	if eof {
		return match{}
	}
	return match{v: need}
}

func (s *shapes) open(f int64) span {
	if s.openAt < 0 {
		return span{f, f}
	}
	return span{s.openAt, f}
}

func (s *shapes) need() int64 { return s.pos - lookBehind }

// scan returns the offset before which no span can start that is not
// known yet.
func (s *shapes) scan(w *Writer, eof bool) int64 {
	b := w.buf
	for {
		if s.openAt >= 0 && !s.extend(w, eof) {
			return s.pos
		}
		i := nextCandidate(b, int(s.pos-w.base))
		s.pos = w.base + int64(i)
		if i == len(b) {
			return s.pos
		}
		m := s.try(w, i, eof)
		switch {
		case m.v == need:
			return s.pos
		case m.v == miss:
			// No rule starts inside a word: skip to its end.
			for i++; i < len(b) && word[b[i-1]] && word[b[i]]; i++ {
			}
			s.pos = w.base + int64(i)
		case m.to >= 0:
			w.add(w.base+int64(m.from), w.base+int64(m.to))
			s.pos = w.base + int64(m.next)
		default:
			s.openAt, s.pos = w.base+int64(m.from), w.base+int64(m.next)
			s.mode, s.set, s.quote, s.bs = m.mode, m.set, m.quote, false
		}
	}
}

// nextCandidate returns the first offset from i on where a rule may
// start: a separator, a dash, or the first letter or digit of a word.
func nextCandidate(b []byte, i int) int {
	if i > 0 && i < len(b) && word[b[i-1]] {
		for i < len(b) && word[b[i]] { // inside a word: no rule starts here
			i++
		}
	}
	for i < len(b) {
		switch c := b[i]; {
		case c == '=' || c == ':' || c == '-':
			return i
		case alnum[c]:
			return i
		case c == '_':
			for i++; i < len(b) && word[b[i]]; i++ {
			}
		default:
			i++
		}
	}
	return i
}

// extend reads on in an open span; it reports whether the span ended.
func (s *shapes) extend(w *Writer, eof bool) bool {
	b := w.buf[s.pos-w.base:]
	for i, c := range b {
		if s.stops(c) {
			end := s.pos + int64(i)
			w.add(s.openAt, end)
			s.openAt, s.pos = -1, end
			return true
		}
	}
	s.pos = w.n
	if eof {
		w.add(s.openAt, w.n)
		s.openAt = -1
		return true
	}
	return false
}

func (s *shapes) stops(c byte) bool {
	switch s.mode {
	case modeToken:
		return !s.set[c]
	case modeQuoted:
		if c == '\n' || c == s.quote && !s.bs {
			return true
		}
		s.bs = s.quote == '"' && c == '\\' && !s.bs
		return false
	case modeEscQuoted:
		return c == '\\' || c == '\n'
	case modeHeader:
		return headerStop[c]
	default:
		return valueStop[c]
	}
}

// try runs the rules that may start at b[i], in a fixed order: the first
// that needs more bytes or hits decides.
func (s *shapes) try(w *Writer, i int, eof bool) match {
	b := w.buf
	c := b[i]
	switch c {
	case '=', ':':
		return keyed(b, i, eof)
	case '-':
		return flag(b, i, eof)
	}
	for _, t := range tokenShapes[c] {
		if m := t.match(b, i, eof); m.v != miss {
			return m
		}
	}
	var m match
	switch c {
	case 'A':
		m = s.awsKeyID(w, i, eof)
	case 'e':
		m = jwt(b, i, eof)
	case 'b', 'B':
		m = bearer(b, i, eof)
	}
	if m.v != miss {
		return m
	}
	if len(b)-i < 6 || b[i+4] == 'Q' && b[i+5] == '~' {
		if m := azureSecret(b, i, eof); m.v != miss {
			return m
		}
	}
	if w.base+int64(i) < s.awsNear {
		return awsSecretKey(b, i, eof)
	}
	return match{}
}

// run counts the bytes of set in b from i on, up to limit. atEnd reports
// that b ends at i+k: the count may grow with more bytes, and b[i+k] is
// there to look at only when atEnd is false.
func run(b []byte, i int, set *set, limit int) (k int, atEnd bool) {
	for k < limit && i+k < len(b) && set[b[i+k]] {
		k++
	}
	return k, i+k >= len(b)
}

// hasPrefix reports whether b[i:] starts with p; more reports that b ends
// inside what could still be p.
func hasPrefix(b []byte, i int, p string) (ok, more bool) {
	rest := b[i:]
	if len(rest) < len(p) {
		return false, string(rest) == p[:len(rest)]
	}
	return string(rest[:len(p)]) == p, false
}

// tokenShape is a credential known by its prefix: the prefix, then at
// least min bytes of set; the whole word is the secret.
type tokenShape struct {
	prefix string
	set    *set
	min    int
}

func (t tokenShape) match(b []byte, i int, eof bool) match {
	ok, more := hasPrefix(b, i, t.prefix)
	if more {
		return needOr(eof)
	}
	if !ok {
		return match{}
	}
	k, atEnd := run(b, i+len(t.prefix), t.set, t.min)
	switch {
	case k >= t.min:
		return opened(i, i+len(t.prefix), modeToken, t.set, 0)
	case atEnd:
		return needOr(eof)
	}
	return match{}
}

// tokenShapes holds the prefixed credentials by their first byte (made by
// makeTables).
var tokenShapes [256][]tokenShape

func makeTokenShapes() (m [256][]tokenShape) {
	for _, t := range []tokenShape{
		{"ghp_", alnum, 20}, {"gho_", alnum, 20}, {"ghu_", alnum, 20}, {"ghs_", alnum, 20}, {"ghr_", alnum, 20},
		{"github_pat_", word, 20},
		{"glpat-", tokenBytes, 20},
		{"sk-", tokenBytes, 20}, // OpenAI (sk-proj-, sk-svcacct-) and Anthropic (sk-ant-)
		{"sk_live_", alnum, 16}, {"sk_test_", alnum, 16}, {"rk_live_", alnum, 16}, {"rk_test_", alnum, 16},
		{"xoxb-", slack, 10}, {"xoxp-", slack, 10}, {"xoxa-", slack, 10}, {"xoxo-", slack, 10},
		{"xoxs-", slack, 10}, {"xoxr-", slack, 10}, {"xapp-", slack, 10},
		{"AIza", tokenBytes, 35},    // GCP API key
		{"GOCSPX-", tokenBytes, 20}, // GCP OAuth client secret
		{"ya29.", dotted, 20},       // GCP OAuth access token
		{"hf_", alnum, 30},
		{"npm_", alnum, 30},
	} {
		m[t.prefix[0]] = append(m[t.prefix[0]], t)
	}
	return m
}

// awsKeyID masks an AWS access key id (AKIA..., ASIA...: exactly 20
// upper-case letters and digits), and looks for its secret key after it.
func (s *shapes) awsKeyID(w *Writer, i int, eof bool) match {
	b := w.buf
	ok1, more1 := hasPrefix(b, i, "AKIA")
	ok2, more2 := hasPrefix(b, i, "ASIA")
	if more1 || more2 {
		return needOr(eof)
	}
	if !ok1 && !ok2 {
		return match{}
	}
	k, atEnd := run(b, i+4, upperDigit, 17)
	if atEnd && !eof {
		return match{v: need}
	}
	if k != 16 || !atEnd && word[b[i+20]] {
		return match{}
	}
	s.awsNear = w.base + int64(i+20) + awsNearby
	return closed(i, i+20)
}

// awsSecretKey masks a 40-byte base64 word next to an access key id.
func awsSecretKey(b []byte, i int, eof bool) match {
	if i > 0 && base64[b[i-1]] {
		return match{}
	}
	k, atEnd := run(b, i, base64, 41)
	if atEnd && !eof {
		return match{v: need}
	}
	if k != 40 || !atEnd && b[i+40] == '=' {
		return match{}
	}
	return closed(i, i+40)
}

// jwt masks a JSON web token: eyJ..., a dot, eyJ..., and what follows.
func jwt(b []byte, i int, eof bool) match {
	ok, more := hasPrefix(b, i, "eyJ")
	if more {
		return needOr(eof)
	}
	if !ok {
		return match{}
	}
	k, atEnd := run(b, i+3, tokenBytes, maxJWTHead)
	if atEnd {
		return needOr(eof)
	}
	d := i + 3 + k
	if k < 10 || k == maxJWTHead || b[d] != '.' {
		return match{}
	}
	ok, more = hasPrefix(b, d+1, "eyJ")
	if more {
		return needOr(eof)
	}
	if !ok {
		return match{}
	}
	return opened(i, d, modeToken, dotted, 0)
}

// bearer masks the token after "Bearer " (any case), at least 8 bytes.
func bearer(b []byte, i int, eof bool) match {
	if b[i]|0x20 != 'b' {
		return match{}
	}
	if len(b)-i < 7 {
		if equalFold(b[i:], "bearer"[:min(6, len(b)-i)]) {
			return needOr(eof)
		}
		return match{}
	}
	if !equalFold(b[i:i+6], "bearer") || b[i+6] != ' ' && b[i+6] != '\t' {
		return match{}
	}
	t, atEnd := run(b, i+6, blank, maxSpaces)
	if atEnd {
		return needOr(eof)
	}
	t += i + 6
	k, atEnd := run(b, t, bearerBytes, 8)
	switch {
	case k >= 8:
		return opened(t, t, modeToken, bearerBytes, 0)
	case atEnd:
		return needOr(eof)
	}
	return match{}
}

// azureSecret masks an Azure client secret: three bytes, a digit, "Q~",
// then 31 to 34 more (37 to 40 bytes of [A-Za-z0-9_~.-] in all).
func azureSecret(b []byte, i int, eof bool) match {
	if i > 0 && azure[b[i-1]] {
		return match{}
	}
	if len(b)-i < 6 {
		if k, _ := run(b, i, azure, 6); k == len(b)-i {
			return needOr(eof)
		}
		return match{}
	}
	if b[i+3] < '0' || b[i+3] > '9' || b[i+4] != 'Q' || b[i+5] != '~' {
		return match{}
	}
	k, atEnd := run(b, i, azure, 41)
	if atEnd && !eof {
		return match{v: need}
	}
	if k < 37 || k > 40 {
		return match{}
	}
	return closed(i, i+k)
}
