package wire

import "encoding/json"

// maxScannedID is the longest id the scanner keeps; a longer one is not
// read (a real client's ids are short).
const maxScannedID = 1 << 10

// idScanner finds the top-level "id" of a JSON object that it is fed in
// pieces, without keeping the rest and without the object having to be
// valid JSON or complete: the id of a message too long to read, or one
// that does not parse, so that its error can carry it and the client that
// sent it fails at once instead of waiting for its own timeout. It tracks
// strings and nesting only; memory stays under maxScannedID however long
// the message is.
type idScanner struct {
	depth    int
	inString bool
	escaped  bool
	started  bool // the first character was '{'
	broken   bool // not an object: nothing to find
	expect   byte // at depth 1: 'k' a key, ':' its colon, 'v' its value, ',' a comma
	key      []byte
	isID     bool   // the key just read is "id"
	value    []byte // the id's value being read
	inValue  bool
	found    json.RawMessage // the last complete top-level id
}

// feed scans the next piece of the message.
func (s *idScanner) feed(p []byte) {
	for _, c := range p {
		if s.broken {
			return
		}
		s.step(c)
	}
}

func (s *idScanner) step(c byte) {
	if !s.started {
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{':
			s.started, s.depth, s.expect = true, 1, 'k'
		default:
			s.broken = true
		}
		return
	}
	if s.inValue {
		s.valueByte(c)
		return
	}
	if s.inString {
		if s.stringEnds(c) && s.depth == 1 && s.expect == 'k' {
			s.isID = string(s.key) == "id"
			s.expect = ':'
			return
		}
		if s.inString && s.depth == 1 && s.expect == 'k' && len(s.key) <= 2 {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case ' ', '\t', '\r', '\n':
	case '"':
		s.inString = true
		if s.depth == 1 && s.expect == 'k' {
			s.key = s.key[:0]
		}
		if s.depth == 1 && s.expect == 'v' {
			s.startValue(c)
		}
	case '{', '[':
		if s.depth == 1 && s.expect == 'v' {
			s.expect = ','
		}
		s.depth++
	case '}', ']':
		s.depth--
		if s.depth <= 0 {
			s.broken = true // the object ended
		}
	case ':':
		if s.depth == 1 && s.expect == ':' {
			s.expect = 'v'
		}
	case ',':
		if s.depth == 1 {
			s.expect = 'k'
		}
	default:
		if s.depth == 1 && s.expect == 'v' {
			s.startValue(c)
		}
	}
}

// stringEnds takes c inside a string and reports whether it closes it.
func (s *idScanner) stringEnds(c byte) bool {
	switch {
	case s.escaped:
		s.escaped = false
	case c == '\\':
		s.escaped = true
	case c == '"':
		s.inString = false
		return true
	}
	return false
}

// startValue begins a top-level value: kept when it is the id's.
func (s *idScanner) startValue(c byte) {
	s.expect = ','
	if !s.isID {
		return
	}
	s.inValue, s.value = true, append(s.value[:0], c)
	s.inString = c == '"'
}

// valueByte reads the id's value: a string through its closing quote, or
// anything else up to the next delimiter.
func (s *idScanner) valueByte(c byte) {
	if s.inString {
		s.keep(c)
		if s.stringEnds(c) {
			s.endValue()
		}
		return
	}
	switch c {
	case ',', '}', ' ', '\t', '\r', '\n':
		s.endValue()
		s.step(c)
	default:
		s.keep(c)
	}
}

func (s *idScanner) keep(c byte) {
	if len(s.value) > maxScannedID {
		return
	}
	s.value = append(s.value, c)
}

func (s *idScanner) endValue() {
	s.inValue = false
	if len(s.value) <= maxScannedID && checkID(s.value) == "" {
		s.found = append(json.RawMessage(nil), s.value...)
	}
}

// id returns the last well-formed top-level id seen, or nil.
func (s *idScanner) id() json.RawMessage { return s.found }

// ScanID returns the top-level "id" of b, a JSON object that may be
// incomplete or invalid past the id, or nil when no valid id can be read.
func ScanID(b []byte) json.RawMessage {
	var s idScanner
	s.feed(b)
	return s.id()
}
