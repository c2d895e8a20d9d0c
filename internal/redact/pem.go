package redact

import "bytes"

// pemBlocks masks private keys in PEM form: from "-----BEGIN <label>-----",
// where the label names a private key, through the matching END line. The
// body is masked as it arrives, so a block costs no memory however long.
// A block whose END never comes ends at the first byte that cannot be part
// of a PEM body (a quote closing a JSON string, say); a run of backslashes
// just before that byte is left alone, so a JSON escape is never cut.
type pemBlocks struct {
	pos    int64 // next byte to look at
	openAt int64 // start of the block being read, or -1
	dashes int   // consecutive '-' just read, inside a block
	end    int   // progress through "END": 1-3, then 4 in its label
	bs     int   // consecutive '\' just read, inside a block
}

var (
	pemBegin = []byte("-----BEGIN ")
	pemKey   = []byte("PRIVATE KEY")
)

// maxLabel bounds a BEGIN line's label ("ENCRYPTED PRIVATE KEY", "PGP
// PRIVATE KEY BLOCK", "OPENSSH PRIVATE KEY").
const maxLabel = 48

func (p *pemBlocks) open(f int64) span {
	if p.openAt < 0 {
		return span{f, f}
	}
	return span{p.openAt, f}
}

// need is the earliest offset whose bytes the detector still reads.
func (p *pemBlocks) need() int64 {
	if p.openAt >= 0 {
		return p.pos - int64(p.bs)
	}
	return p.pos
}

// scan returns the offset before which no block can start and every byte
// inside a block has been masked.
func (p *pemBlocks) scan(w *Writer, eof bool) int64 {
	for {
		if p.openAt >= 0 {
			if !p.body(w, eof) {
				return p.pos - int64(p.bs)
			}
			continue
		}
		from := p.pos - w.base
		k := bytes.Index(w.buf[from:], pemBegin)
		if k < 0 {
			p.pos = w.n
			if !eof {
				p.pos -= int64(suffixPrefix(w.buf[from:], pemBegin))
			}
			return p.pos
		}
		at := from + int64(k)
		p.pos = w.base + at
		ok, more := beginLine(w.buf[at:], eof)
		if more {
			return p.pos
		}
		if !ok {
			p.pos++
			continue
		}
		p.openAt = p.pos
		p.pos += int64(beginLen(w.buf[at:]))
		p.dashes, p.end, p.bs = 0, 0, 0
	}
}

// body reads the body of an open block; it reports whether the block
// ended (then scanning for the next one goes on from pos).
func (p *pemBlocks) body(w *Writer, eof bool) bool {
	b := w.buf[p.pos-w.base:]
	for i, c := range b {
		if !pemBody[c] {
			end := p.pos + int64(i)
			w.add(p.openAt, end-int64(p.bs))
			p.openAt, p.pos, p.bs = -1, end-int64(p.bs), 0
			return true
		}
		if c == '\\' {
			p.bs++
		} else {
			p.bs = 0
		}
		if p.step(c) {
			end := p.pos + int64(i) + 1
			w.add(p.openAt, end)
			p.openAt, p.pos = -1, end
			return true
		}
	}
	p.pos = w.n
	if eof {
		w.add(p.openAt, w.n)
		p.openAt, p.bs = -1, 0
		return false
	}
	return false
}

// step follows the END line through one body byte; it reports whether
// the END line's closing dashes are complete.
func (p *pemBlocks) step(c byte) bool {
	if c == '-' {
		p.dashes++
		if p.end == 4 && p.dashes == 5 {
			return true
		}
		if p.end < 4 {
			p.end = 0
		}
		return false
	}
	switch {
	case p.end == 4:
	case p.end == 0 && p.dashes >= 5 && c == 'E', p.end == 1 && c == 'N':
		p.end++
	case p.end == 2 && c == 'D':
		p.end = 4
	default:
		p.end = 0
	}
	p.dashes = 0
	return false
}

// beginLine reports whether b starts with a BEGIN line of a private key
// ("-----BEGIN " label "-----"), or that more bytes are needed to tell.
func beginLine(b []byte, eof bool) (ok, more bool) {
	rest := b[len(pemBegin):]
	for i := 0; i <= maxLabel; i++ {
		if i == len(rest) {
			return false, !eof
		}
		c := rest[i]
		if c == '-' {
			label := rest[:i]
			tail := rest[i:]
			if len(tail) < 5 {
				if bytes.Count(tail, []byte("-")) == len(tail) {
					return false, !eof
				}
				return false, false
			}
			return bytes.HasPrefix(tail, []byte("-----")) && bytes.Contains(label, pemKey), false
		}
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ') {
			return false, false
		}
	}
	return false, false
}

// beginLen is the length of the BEGIN line at the start of b, which
// beginLine accepted.
func beginLen(b []byte) int {
	return len(pemBegin) + bytes.IndexByte(b[len(pemBegin):], '-') + 5
}

// suffixPrefix is the length of the longest suffix of b that is a proper
// prefix of m.
func suffixPrefix(b, m []byte) int {
	k := min(len(b), len(m)-1)
	if bytes.IndexByte(b[len(b)-k:], m[0]) < 0 {
		return 0
	}
	for ; k > 0; k-- {
		if bytes.HasSuffix(b, m[:k]) {
			return k
		}
	}
	return 0
}
