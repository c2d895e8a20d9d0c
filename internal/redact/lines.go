package redact

import "bytes"

// Lines redacts a stream that arrives line by line and hands the redacted
// stream back line by line, for logs kept as records of one line each. A
// private key spread over many lines comes back as one line holding Mask
// (with what preceded its BEGIN and follows its END). Each line given
// comes back before Line returns, unless it is inside a private key
// block or a registered value holds a newline.
//
// Lines is not safe for concurrent use: give each stream its own.
type Lines struct {
	w       *Writer
	sink    lineSink
	scratch []byte
}

// Lines returns a Lines that passes each redacted line to fn (without its
// newline). fn's argument is only valid during the call.
func (r *Redactor) Lines(fn func(line []byte)) *Lines {
	l := &Lines{sink: lineSink{fn: fn}}
	l.w = r.Writer(&l.sink)
	return l
}

// Line redacts one line, given without its newline.
func (l *Lines) Line(line []byte) {
	if len(line) >= chunk {
		l.w.Write(line)
		l.w.Write(newline)
		return
	}
	l.scratch = append(append(l.scratch[:0], line...), '\n')
	l.w.Write(l.scratch)
}

// Close passes on what was withheld, as a last line if it does not end
// with a newline.
func (l *Lines) Close() {
	l.w.Close()
	if len(l.sink.part) > 0 {
		l.sink.fn(l.sink.part)
		l.sink.part = nil
	}
}

var newline = []byte{'\n'}

// lineSink cuts a stream into lines.
type lineSink struct {
	fn   func([]byte)
	part []byte
}

func (s *lineSink) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.part = append(s.part, p...)
			return n, nil
		}
		if len(s.part) > 0 {
			s.part = append(s.part, p[:i]...)
			s.fn(s.part)
			s.part = s.part[:0]
		} else {
			s.fn(p[:i])
		}
		p = p[i+1:]
	}
}
