package capture

import "bytes"

// Lines is an io.Writer that splits what is written into lines and calls
// Func with each, without its trailing "\n" (or "\r\n"). A line longer than
// Max bytes is cut: Func receives its first Max bytes with cut set, and the
// rest of that line is skipped and counted in Skipped. Memory stays at Max
// bytes however long a line is.
//
// Lines is not safe for concurrent use. Call Flush at the end of the stream
// to deliver a last line that had no newline.
type Lines struct {
	// Max is the longest line kept, in bytes; zero or less means 1 MiB.
	Max int
	// Func receives each line. The slice is only valid during the call.
	Func func(line []byte, cut bool)
	// Skipped counts bytes dropped from lines longer than Max.
	Skipped int64
	// Cut counts lines that were longer than Max.
	Cut int64

	buf      []byte
	skipping bool
}

const defaultMaxLine = 1 << 20

// Write splits p into lines. It always returns len(p), nil.
func (l *Lines) Write(p []byte) (int, error) {
	n := len(p)
	max := l.Max
	if max <= 0 {
		max = defaultMaxLine
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if l.skipping {
			if i < 0 {
				l.Skipped += int64(len(p))
				return n, nil
			}
			l.Skipped += int64(i)
			l.skipping = false
			p = p[i+1:]
			continue
		}
		if i < 0 {
			if len(l.buf)+len(p) > max {
				k := max - len(l.buf)
				l.buf = append(l.buf, p[:k]...)
				l.Skipped += int64(len(p) - k)
				l.emit(true)
				l.skipping = true
				return n, nil
			}
			l.buf = append(l.buf, p...)
			return n, nil
		}
		line := p[:i]
		p = p[i+1:]
		if len(l.buf)+len(line) > max {
			k := max - len(l.buf)
			l.buf = append(l.buf, line[:k]...)
			l.Skipped += int64(len(line) - k)
			l.emit(true)
			continue
		}
		if len(l.buf) == 0 {
			l.call(line, false)
			continue
		}
		l.buf = append(l.buf, line...)
		l.emit(false)
	}
	return n, nil
}

// Flush delivers a pending line that had no newline yet.
func (l *Lines) Flush() {
	if len(l.buf) > 0 {
		l.emit(false)
	}
	l.skipping = false
}

func (l *Lines) emit(cut bool) {
	l.call(l.buf, cut)
	l.buf = l.buf[:0]
}

func (l *Lines) call(line []byte, cut bool) {
	if cut {
		l.Cut++
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if l.Func != nil {
		l.Func(line, cut)
	}
}
