package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTooLong reports a line longer than the Lines' limit; the line was
// skipped up to its newline, and reading can go on. Next returns it as a
// *TooLongError.
var ErrTooLong = errors.New("wire: line too long")

// TooLongError is what Next returns for a line past the limit: ID is the
// line's top-level "id" when one could be read while it was skipped (see
// ScanID), else nil.
type TooLongError struct{ ID json.RawMessage }

func (e *TooLongError) Error() string { return ErrTooLong.Error() }

// Is makes errors.Is(err, ErrTooLong) true.
func (e *TooLongError) Is(target error) bool { return target == ErrTooLong }

// Lines splits a stream into newline-delimited messages of at most max
// bytes each, not counting the newline. A longer line is skipped through
// its newline without being kept, and reported once with a TooLongError
// carrying its id, so a client that sends garbage costs at most max bytes
// of memory, and the next line is read as usual.
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

// read returns one line, or a TooLongError after skipping one past the
// limit; the skipped line's id is looked for as it goes by.
func (l *Lines) read() ([]byte, error) {
	l.buf = l.buf[:0]
	var skip *idScanner // set once the line is too long
	for {
		chunk, err := l.r.ReadSlice('\n')
		if skip == nil {
			n := len(chunk)
			if err == nil {
				n-- // the newline
			}
			if len(l.buf)+n > l.max {
				skip = &idScanner{}
				skip.feed(l.buf)
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if skip != nil {
			skip.feed(chunk)
		}
		switch {
		case err == nil:
			if skip != nil {
				return nil, &TooLongError{ID: skip.id()}
			}
			return l.buf[:len(l.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case skip != nil:
			return nil, &TooLongError{ID: skip.id()}
		default:
			return l.buf, err
		}
	}
}
