package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrTooLong reports a line longer than the Lines' limit; the line was
// skipped up to its newline, and reading can go on.
var ErrTooLong = errors.New("wire: line too long")

// Lines splits a stream into newline-delimited messages of at most max
// bytes each, not counting the newline. A longer line is skipped through its newline without being
// kept, and reported once with ErrTooLong, so a client that sends garbage
// costs at most Max bytes of memory, and the next line is read as usual.
type Lines struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLines returns Lines reading r with lines of at most max bytes.
func NewLines(r io.Reader, max int) *Lines {
	return &Lines{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its line ending ("\n" or "\r\n").
// The slice is valid until the next call. Lines holding nothing but
// spaces are skipped. At the end of the stream it returns io.EOF; a last
// line without a newline is returned first.
func (l *Lines) Next() ([]byte, error) {
	for {
		line, err := l.read()
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		return line, nil
	}
}

// read returns one line, or ErrTooLong after skipping one past the limit.
func (l *Lines) read() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			n := len(chunk)
			if err == nil {
				n-- // the newline
			}
			if len(l.buf)+n > l.max {
				tooLong = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrTooLong
			}
			return l.buf[:len(l.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong:
			return nil, ErrTooLong
		default:
			return l.buf, err
		}
	}
}
