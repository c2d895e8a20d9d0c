// Package runlog keeps the full log of each execution in a file of JSON
// lines, and lets readers replay a log from any line and follow it live.
//
// A Writer appends records and wakes the followers of its execution
// through a Hub after each one; a reader takes the Hub's channel before it
// reads to the end of the file, so a record appended after the read always
// wakes it. Logs outlive their runs: a finished run replays from its file.
package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Record is one line of a log.
type Record struct {
	// Seq numbers records from 1 in their log.
	Seq int `json:"seq"`
	// Time is when the record was written.
	Time time.Time `json:"time"`
	// Stream is "stdout", "stderr", "event" (a headless stream line, as
	// JSON text) or "system" (what the service itself says).
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// DefaultMaxBytes bounds a log file; beyond it, records are counted but
// not written, and a last system record says so.
const DefaultMaxBytes = 64 << 20

// Hub wakes the followers of logs when they grow or end.
type Hub struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{ch: map[string]chan struct{}{}} }

// Changed returns a channel closed at the next Notify for id.
func (h *Hub) Changed(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.ch[id]
	if !ok {
		c = make(chan struct{})
		h.ch[id] = c
	}
	return c
}

// Notify wakes every follower of id.
func (h *Hub) Notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.ch[id]; ok {
		close(c)
		delete(h.ch, id)
	}
}

// Writer appends records to one log. Safe for concurrent use.
type Writer struct {
	id      string
	hub     *Hub
	mu      sync.Mutex
	f       *os.File
	bw      *bufio.Writer
	seq     int
	n       int64
	max     int64
	dropped int64
	closed  bool
}

// Create creates the log file at path (mode 0600) for execution id.
func Create(path, id string, hub *Hub, maxBytes int64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create run log: %w", err)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	st, _ := f.Stat()
	w := &Writer{id: id, hub: hub, f: f, bw: bufio.NewWriterSize(f, 32<<10), max: maxBytes}
	if st != nil {
		w.n = st.Size()
	}
	return w, nil
}

// Write appends one record. Records past the size bound are dropped and
// counted.
func (w *Writer) Write(stream string, text []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.n >= w.max {
		w.dropped++
		return
	}
	w.seq++
	b, _ := json.Marshal(Record{Seq: w.seq, Time: time.Now().UTC(), Stream: stream, Text: string(bytes.ToValidUTF8(text, []byte("\uFFFD")))})
	b = append(b, '\n')
	w.bw.Write(b)
	w.n += int64(len(b))
	// Flush per record: followers read the file, and a crash must keep
	// what was printed.
	w.bw.Flush()
	if w.hub != nil {
		w.hub.Notify(w.id)
	}
}

// Close flushes and closes the log, noting dropped records.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	if w.dropped > 0 {
		w.n = 0 // let the note through
		w.mu.Unlock()
		w.Write("system", fmt.Appendf(nil, "log size limit reached: %d records dropped", w.dropped))
		w.mu.Lock()
	}
	w.closed = true
	err := errors.Join(w.bw.Flush(), w.f.Close())
	w.mu.Unlock()
	if w.hub != nil {
		w.hub.Notify(w.id)
	}
	return err
}

// Reader reads a log incrementally: each Next call returns the complete
// records appended since the last call.
type Reader struct {
	path string
	off  int64
	part []byte
}

// NewReader returns a reader of the log at path, from its start. A log
// that does not exist yet reads as empty.
func NewReader(path string) *Reader { return &Reader{path: path} }

// Next returns the records written since the last call, raw JSON lines
// without their newline.
func (r *Reader) Next() ([][]byte, error) {
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(r.off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, err
	}
	r.off += int64(len(data))
	data = append(r.part, data...)
	var out [][]byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		out = append(out, data[:i])
		data = data[i+1:]
	}
	r.part = append([]byte(nil), data...)
	return out, nil
}

// Tail returns the stdout and stderr text of the last records of the log at
// path, at most max bytes each: what a crashed run had printed.
func Tail(path string, max int) (stdout, stderr string) {
	r := NewReader(path)
	var out, errb []byte
	for {
		recs, err := r.Next()
		if err != nil || len(recs) == 0 {
			break
		}
		for _, raw := range recs {
			var rec Record
			if json.Unmarshal(raw, &rec) != nil {
				continue
			}
			switch rec.Stream {
			case "stdout", "event":
				out = keepTail(append(out, rec.Text+"\n"...), max)
			case "stderr":
				errb = keepTail(append(errb, rec.Text+"\n"...), max)
			}
		}
	}
	return string(out), string(errb)
}

func keepTail(b []byte, max int) []byte {
	if len(b) > max {
		return append([]byte(nil), b[len(b)-max:]...)
	}
	return b
}
