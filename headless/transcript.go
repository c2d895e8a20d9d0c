package headless

import (
	"bufio"
	"fmt"
	"os"

	"github.com/corralrun/corral/internal/redact"
)

// transcript writes the agent's stream to a file, one line per stream line,
// secrets redacted across lines (a private key's body included), up to a
// byte bound on the stream. When the bound is reached a last marker line
// says so and nothing more is written. Write errors (a full disk) stop the
// transcript, never the turn.
type transcript struct {
	f         *os.File
	w         *bufio.Writer
	red       *redact.Writer // the stream's way to w
	n, max    int64
	truncated bool
	err       error
}

func openTranscript(path string, max int64, red *redact.Redactor) (*transcript, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("headless: opening transcript: %w (choose a writable TranscriptPath, or leave it empty)", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &transcript{f: f, w: w, red: red.Writer(w), max: max}, nil
}

var (
	newline = []byte{'\n'}
	cutMark = []byte(" [cut]")
)

// line records one stream line (cut reports it was cut at the line bound).
func (t *transcript) line(b []byte, cut bool) {
	if t == nil || t.truncated || t.err != nil {
		return
	}
	need := int64(len(b)) + 1
	if t.n+need > t.max {
		t.truncated = true
		t.red.Close() // what the redactor withheld goes before the marker
		fmt.Fprintf(t.w, "{\"type\":\"corral_transcript_truncated\",\"bytes_written\":%d,\"max\":%d}\n", t.n, t.max)
		return
	}
	t.n += need
	t.red.Write(b)
	if cut {
		// The line was cut at the line bound: it is not JSON any more.
		t.red.Write(cutMark)
	}
	if _, err := t.red.Write(newline); err != nil {
		t.err = err
	}
}

// flush writes what is decided: every whole line, unless a private key
// block is still open.
func (t *transcript) flush() {
	if t == nil || t.err != nil {
		return
	}
	t.err = t.w.Flush()
}

func (t *transcript) close() {
	if t == nil {
		return
	}
	if err := t.red.Close(); err != nil && t.err == nil {
		t.err = err
	}
	t.flush()
	t.f.Close()
}
