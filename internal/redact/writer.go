package redact

import (
	"cmp"
	"errors"
	"io"
	"slices"
)

// ErrClosed is returned by a Writer's Write after Close.
var ErrClosed = errors.New("redact: write after close")

// chunk bounds how much of one Write is held at a time, so that a Writer's
// memory stays near chunk plus its look-behind and look-ahead however
// large the writes.
const chunk = 32 << 10

// compactAt is how many dropped bytes make a Writer move what it holds.
const compactAt = 4 << 10

// Writer redacts a stream on its way to another writer. It withholds what
// it cannot decide yet: a possible registered value at the end of what was
// written (up to the longest one, less a byte), a shape still being read
// (a few hundred bytes at most). A newline decides everything before it
// unless a registered value contains one, and an open private key block
// is masked as it arrives, so its bytes are never held.
//
// A Writer holds at most 32 KiB plus the longest registered value and
// about 5 KiB, whatever is written and however. It is not safe for
// concurrent use. Close writes what was withheld; it does not close the
// underlying writer.
type Writer struct {
	r   *Redactor
	dst io.Writer
	err error

	buf     []byte // the stream from base on
	base    int64  // stream offset of buf[0]
	n       int64  // bytes written so far
	emitted int64  // output written up to here
	masking bool   // the output ends with a Mask reaching emitted
	found   bool   // some span was found
	closed  bool
	out     []byte // scratch for one Write's output

	spans []span // closed spans not yet emitted past
	lit   literals
	pem   pemBlocks
	shp   shapes
}

// span is a hidden range of the stream, [start, end).
type span struct{ start, end int64 }

// Writer returns a Writer that redacts what is written to it and passes
// the result to dst.
func (r *Redactor) Writer(dst io.Writer) *Writer {
	ensureTables()
	w := &Writer{r: r, dst: dst}
	w.reset()
	return w
}

func (w *Writer) reset() {
	if w.r == nil {
		w.r = &Redactor{}
	}
	w.pem.openAt, w.shp.openAt = -1, -1
}

// Write redacts p. It returns len(p) unless the underlying writer failed
// (then its error, for this and every later Write).
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	total := len(p)
	for len(p) > 0 {
		k := min(len(p), chunk)
		w.buf = append(w.buf, p[:k]...)
		w.n += int64(k)
		p = p[k:]
		w.emit(w.scan(false))
		w.compact()
		if w.err != nil {
			return 0, w.err
		}
	}
	return total, nil
}

// Close writes what was withheld, redacted, and ends the stream.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err == nil {
		w.emit(w.scan(true))
	}
	w.buf, w.spans = nil, nil
	return w.err
}

// scan runs every detector over the new bytes and returns the offset
// before which the stream is decided.
func (w *Writer) scan(eof bool) int64 {
	f := w.lit.scan(w, eof)
	f = min(f, w.pem.scan(w, eof))
	return min(f, w.shp.scan(w, eof))
}

func (w *Writer) add(start, end int64) {
	if end > start {
		w.spans = append(w.spans, span{start, end})
		w.found = true
	}
}

// emit writes the output of the stream up to f.
func (w *Writer) emit(f int64) {
	out := w.emitTo(w.out[:0], f)
	if len(out) > 0 && w.dst != nil {
		if _, err := w.dst.Write(out); err != nil && w.err == nil {
			w.err = err
		}
	}
	if cap(out) <= 2*chunk {
		w.out = out
	}
}

// emitTo appends the output of the stream up to f to out: raw bytes
// outside the spans, one Mask for each run of overlapping or touching
// spans.
func (w *Writer) emitTo(out []byte, f int64) []byte {
	if f <= w.emitted {
		return out
	}
	all := w.spans
	if w.pem.openAt >= 0 || w.shp.openAt >= 0 {
		all = append(all[:len(all):len(all)], w.pem.open(f), w.shp.open(f))
	}
	if len(all) > 1 {
		slices.SortFunc(all, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	}
	pos := w.emitted
	for _, s := range all {
		if s.start >= f {
			break
		}
		if s.start > pos {
			out = append(out, w.buf[pos-w.base:s.start-w.base]...)
			w.masking = false
			pos = s.start
		}
		if end := min(s.end, f); end > pos {
			if !w.masking {
				out = append(out, Mask...)
				w.masking = true
			}
			pos = end
		}
	}
	if pos < f {
		out = append(out, w.buf[pos-w.base:f-w.base]...)
		w.masking = false
	}
	w.emitted = f
	keep := w.spans[:0]
	for _, s := range w.spans {
		if s.end > f {
			keep = append(keep, s)
		}
	}
	w.spans = keep
	return out
}

// compact drops the bytes no detector needs any more, once they are worth
// moving the rest for.
func (w *Writer) compact() {
	keep := min(w.emitted, w.lit.pos, w.pem.need(), w.shp.need())
	if d := keep - w.base; d >= compactAt || d > 0 && 2*d >= int64(len(w.buf)) {
		w.buf = append(w.buf[:0], w.buf[d:]...)
		w.base = keep
	}
}
