package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/internal/mutant"
)

// stream reads one output pipe into a capture buffer, an optional spill file
// and an optional live writer.
type stream struct {
	r     *os.File
	buf   *capture.Buffer
	spill *os.File
	w     io.Writer
	done  chan struct{}
	poke  func() // called when done is closed
}

const (
	minRead = 2 << 10
	maxRead = 128 << 10
)

// newStream makes the pipe for stream i (0 stdout, 1 stderr) and returns the
// end to hand to the child.
func newStream(spec *Spec, i int, w io.Writer) (*stream, *os.File, error) {
	if spec.Stdio != nil {
		return passStream(spec, spec.Stdio[i+1])
	}
	r, cw, err := outputPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("proc: creating pipe: %w", err)
	}
	s := &stream{r: r, buf: capture.NewBuffer(spec.maxOutput()), w: w, done: make(chan struct{})}
	if spec.SpillDir != "" {
		name := [2]string{"stdout-*.log", "stderr-*.log"}[i]
		if s.spill, err = os.CreateTemp(spec.SpillDir, name); err != nil {
			r.Close()
			cw.Close()
			return nil, nil, fmt.Errorf("proc: creating spill file: %w", err)
		}
	}
	// The child expects a blocking descriptor; Fd makes sure of it on every
	// platform (outputPipe already made it so on Unix).
	cw.Fd()
	return s, cw, nil
}

// run copies the pipe until EOF, an error or the drain deadline. Reads
// start small and grow while they come back full, so a quiet command costs
// a few KiB and a flood is read in large gulps.
func (s *stream) run() {
	defer func() {
		close(s.done)
		if s.poke != nil {
			s.poke()
		}
	}()
	b := make([]byte, minRead)
	for {
		n, err := s.r.Read(b)
		if n > 0 {
			s.take(b[:n])
			if n == len(b) && len(b) < maxRead {
				b = make([]byte, len(b)*4)
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The drain's deadline bounds the wait for more output, never
			// the output already written: a reader the machine starved
			// may be behind what the pipe holds.
			sweepPipe(s.r, b, s.take)
		}
		if err != nil {
			return
		}
	}
}

// take keeps p: in the buffer, the spill file and the live writer.
func (s *stream) take(p []byte) {
	s.buf.Write(p)
	if s.spill != nil {
		if _, werr := s.spill.Write(p); werr != nil {
			s.closeSpill(true) // a full disk must not stop the capture
		}
	}
	if s.w != nil {
		s.w.Write(p)
	}
}

// finish closes the pipe and returns what was kept.
func (s *stream) finish() corral.Output {
	s.r.Close()
	o := s.buf.Output()
	if s.spill != nil {
		if o.Truncated {
			o.SpillPath = s.spill.Name()
			s.closeSpill(false)
		} else {
			s.closeSpill(true)
		}
	}
	return o
}

func (s *stream) closeSpill(remove bool) {
	if s.spill == nil {
		return
	}
	s.spill.Close()
	if remove {
		os.Remove(s.spill.Name())
	}
	s.spill = nil
}

// stdinCopier copies a caller's reader into the child's stdin pipe.
type stdinCopier struct {
	src  io.Reader
	w    *os.File
	once sync.Once
}

// openStdin returns the file to give the child as stdin, whether it is ours
// to close after the start, and, for a reader that is not a file, the copier
// that feeds it.
func openStdin(r io.Reader) (f *os.File, owned bool, c *stdinCopier, err error) {
	switch r := r.(type) {
	case nil:
		if mutant.StdinInherited {
			return os.Stdin, false, nil, nil
		}
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, false, nil, fmt.Errorf("proc: opening %s: %w", os.DevNull, err)
		}
		return null, true, nil, nil
	case *os.File:
		return r, false, nil, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, false, nil, fmt.Errorf("proc: creating stdin pipe: %w", err)
	}
	pr.Fd()
	return pr, true, &stdinCopier{src: r, w: pw}, nil
}

func (c *stdinCopier) start() {
	if c == nil {
		return
	}
	go func() {
		// An error here means the child closed its stdin or is gone.
		io.Copy(c.w, c.src)
		c.abandon()
	}()
}

// abandon closes the pipe; a copier blocked writing to it returns.
func (c *stdinCopier) abandon() {
	if c == nil {
		return
	}
	c.once.Do(func() { c.w.Close() })
}
