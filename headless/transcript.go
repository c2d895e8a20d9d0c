package headless

import (
	"bufio"
	"fmt"
	"os"
)

// transcript writes the agent's stream to a file, one line per stream line,
// secrets redacted, up to a byte bound. When the bound is reached a last
// marker line says so and nothing more is written. Write errors (a full
// disk) stop the transcript, never the turn.
type transcript struct {
	f         *os.File
	w         *bufio.Writer
	red       *redactor
	n, max    int64
	truncated bool
	err       error
}

func openTranscript(path string, max int64, red *redactor) (*transcript, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("headless: opening transcript: %w (choose a writable TranscriptPath, or leave it empty)", err)
	}
	return &transcript{f: f, w: bufio.NewWriterSize(f, 64<<10), red: red, max: max}, nil
}

// line records one stream line (cut reports it was cut at the line bound).
func (t *transcript) line(b []byte, cut bool) {
	if t == nil || t.truncated || t.err != nil {
		return
	}
	b = t.red.redact(b)
	need := int64(len(b)) + 1
	if t.n+need > t.max {
		t.truncated = true
		fmt.Fprintf(t.w, "{\"type\":\"corral_transcript_truncated\",\"bytes_written\":%d,\"max\":%d}\n", t.n, t.max)
		return
	}
	t.n += need
	t.w.Write(b)
	if cut {
		// The line was cut at the line bound: it is not JSON any more.
		t.w.WriteString(" [cut]")
	}
	if err := t.w.WriteByte('\n'); err != nil {
		t.err = err
	}
}

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
	t.flush()
	t.f.Close()
}
