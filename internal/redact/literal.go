package redact

import "bytes"

// literals finds the registered values, wherever they occur (inside a
// word, across a shape, overlapping one another).
type literals struct {
	pos int64 // every occurrence starting before pos is found
}

// scan returns the offset before which no occurrence is left to find.
func (l *literals) scan(w *Writer, eof bool) int64 {
	r := w.r
	if len(r.values) == 0 {
		l.pos = w.n
		return l.pos
	}
	// An occurrence starting before limit lies wholly in the buffer.
	limit := w.n - int64(r.maxLen-1)
	if eof {
		limit = w.n
	} else if !r.newline {
		// No value holds a newline: none can start before the last one
		// and end after it.
		if i := bytes.LastIndexByte(w.buf[l.pos-w.base:], '\n'); i >= 0 {
			limit = max(limit, l.pos+int64(i)+1)
		}
	}
	if limit <= l.pos {
		return l.pos
	}
	from := int(l.pos - w.base)
	end := int(limit - w.base)
	for _, v := range r.values {
		open, close := int64(-1), int64(-1)
		for i := from; i < end; {
			k := bytes.Index(w.buf[i:], v)
			if k < 0 || i+k >= end {
				break
			}
			s, e := w.base+int64(i+k), w.base+int64(i+k+len(v))
			if s > close { // not touching the previous occurrence
				w.add(open, close)
				open = s
			}
			close = e
			i += k + 1
		}
		w.add(open, close)
	}
	l.pos = limit
	return limit
}
