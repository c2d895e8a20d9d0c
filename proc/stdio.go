package proc

import (
	"fmt"
	"io"
	"os"

	"github.com/corralrun/corral/capture"
)

// stdin returns what the command reads: Stdio's first file when Stdio is
// set (the null device for nil), Stdin otherwise.
func (s *Spec) stdin() io.Reader {
	if s.Stdio == nil {
		return s.Stdin
	}
	if f := s.Stdio[0]; f != nil {
		return f
	}
	return nil
}

// passStream gives the command f (the null device when nil) as one of its
// output streams, with no pipe: the child gets a duplicate of f, which
// Start closes once the child holds it, and the stream reads nothing. Its
// reader is nil, on which every method of os.File returns ErrInvalid, so
// the stream's run ends at once, a drain does not wait for it and finish
// keeps nothing.
func passStream(spec *Spec, f *os.File) (*stream, *os.File, error) {
	var dup *os.File
	var err error
	if f == nil {
		dup, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	} else {
		dup, err = dupFile(f)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("proc: passing an output stream: %w", err)
	}
	return &stream{buf: capture.NewBuffer(-1), done: make(chan struct{})}, dup, nil
}
