// Package runlog keeps the full log of each execution in a file of JSON
// lines, and lets readers replay a log from any line and follow it live.
//
// A Writer appends records and wakes the followers of its execution
// through a Hub after each one; a reader takes the Hub's channel before it
// reads to the end of the file, so a record appended after the read always
// wakes it. Logs outlive their runs: a finished run replays from its file.
//
// A Writer survives a full disk: a record that cannot be written is
// counted, never left half written, and once writing works again a
// system record says what was lost. It holds its file open only while it
// writes a batch: a live run's log costs no descriptor between batches,
// so that a worker holding thousands of runs holds none of their logs.
// Readers read in small chunks, so a follower holds at most a few records
// in memory however large the log.
package runlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/corralrun/corral/internal/mutant"
)

// Record is one line of a log.
type Record struct {
	// Seq numbers records from 1 in their log. Records that could not be
	// written leave a gap, explained by the system record that follows.
	Seq int `json:"seq"`
	// Time is when the record was written.
	Time time.Time `json:"time"`
	// Stream is "stdout", "stderr", "event" (a headless stream line, as
	// JSON text) or "system" (what the service itself says).
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// DefaultMaxBytes bounds a log file; beyond it, output records are
// counted but not written, and a last system record says so. System
// records (the start, the end, these notes) are always written.
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

// Writer appends records to one log. Safe for concurrent use. A nil
// *Writer discards what it is given (a run that could not create its
// log).
//
// Records are written in batches: at once for a system record or a batch
// of FlushBytes, else FlushDelay after the first record of the batch, so
// that a chatty run costs one write per batch rather than per line, and
// a follower sees a line at most FlushDelay late.
type Writer struct {
	id   string
	path string
	hub  *Hub
	max  int64

	mu      sync.Mutex
	f       *os.File // from Create to the first batch's end; then only while a batch is written
	seq     int
	n       int64  // bytes of whole records in the file
	batch   []byte // records not written yet
	inBatch int64  // how many
	timer   *time.Timer
	closed  bool
	dropped int64 // output records past the size bound
	// Records that could not be written since the last note, the numbers
	// of the first and last, and how many in all.
	lost, lostBytes, lostTotal int64
	lostFrom, lostTo           int
	lastErr                    error
}

// Batching of the writes.
const (
	FlushBytes = 32 << 10
	FlushDelay = 20 * time.Millisecond
)

// Create creates the log file at path (mode 0600) for execution id, or
// opens it to append. The file stays open until the first batch is
// written; from then on it is opened (to append, never created again)
// for each batch and closed after it.
func Create(path, id string, hub *Hub, maxBytes int64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create run log: %w", err)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	w := &Writer{id: id, path: path, hub: hub, f: f, max: maxBytes}
	if st, err := f.Stat(); err == nil {
		w.n = st.Size()
	}
	return w, nil
}

// Write appends one record. Output records past the size bound are
// dropped and counted; records the file refuses (a full disk) are
// counted, and noted by a system record written before the next ones
// the file takes. Their numbers stay unused but the last, which the
// note takes.
func (w *Writer) Write(stream string, text []byte) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.write(stream, text)
	}
}

func (w *Writer) write(stream string, text []byte) {
	if stream != "system" && w.n+int64(len(w.batch)) >= w.max {
		w.dropped++
		return
	}
	w.add(stream, text)
	switch {
	case stream == "system" || len(w.batch) >= FlushBytes:
		w.flush()
	case w.timer == nil:
		w.timer = time.AfterFunc(FlushDelay, w.flushLater)
	}
}

// add encodes one record into the batch.
func (w *Writer) add(stream string, text []byte) {
	w.seq++
	w.batch = encode(w.batch, w.seq, stream, text)
	w.inBatch++
}

// encode appends the line of a record to b.
func encode(b []byte, seq int, stream string, text []byte) []byte {
	line, _ := json.Marshal(Record{Seq: seq, Time: time.Now().UTC(), Stream: stream, Text: string(bytes.ToValidUTF8(text, []byte("\uFFFD")))})
	return append(append(b, line...), '\n')
}

func (w *Writer) flushLater() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if !w.closed {
		w.flush()
	}
}

// flush writes the batch whole, or nothing of it: a short write is cut
// off again, so that the file never holds part of a record.
func (w *Writer) flush() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if len(w.batch) == 0 {
		return
	}
	out := w.batch
	if w.lost > 0 {
		out = encode(nil, w.lostTo, "system", fmt.Appendf(nil, "log: %d records (%d bytes, numbers %d to %d) could not be written: %v",
			w.lost, w.lostBytes, w.lostFrom, w.lostTo, w.lastErr))
		out = append(out, w.batch...)
	}
	f, err := w.file()
	k := 0
	if err == nil {
		k, err = f.Write(out)
	}
	if err == nil {
		w.n += int64(k)
		w.lost, w.lostBytes = 0, 0
		if w.hub != nil {
			w.hub.Notify(w.id)
		}
	} else {
		w.lastErr = err
		if k > 0 && f.Truncate(w.n) != nil {
			// The part stays: end it, so that it reads as one bad line.
			if _, err := f.Write([]byte("\n")); err == nil {
				w.n += int64(k) + 1
			}
		}
		if w.lost == 0 {
			w.lostFrom = w.seq - int(w.inBatch) + 1
		}
		w.lostTo = w.seq
		w.lost += w.inBatch
		w.lostBytes += int64(len(w.batch))
		w.lostTotal += w.inBatch
	}
	w.batch, w.inBatch = w.batch[:0], 0
	if cap(w.batch) > 4*FlushBytes {
		w.batch = nil // a long line passed: do not keep its room
	}
	if f != nil && !mutant.LogKept {
		f.Close()
		w.f = nil
	}
}

// file returns the log's file for a batch: the one Create opened, or the
// file opened again to append (a file removed meanwhile is not made
// again: the batch is lost, and counted).
func (w *Writer) file() (*os.File, error) {
	if w.f != nil {
		return w.f, nil
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	w.f = f
	return f, nil
}

// Close writes what is pending and the notes still due, then closes the
// log.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	if w.dropped > 0 {
		w.write("system", fmt.Appendf(nil, "log size limit (%d bytes) reached: %d output records dropped", w.max, w.dropped))
	}
	w.flush()
	w.closed = true
	var err error
	if w.f != nil {
		err = w.f.Close()
		w.f = nil
	}
	w.mu.Unlock()
	if w.hub != nil {
		w.hub.Notify(w.id)
	}
	return err
}

// Note says what the log is missing, for the execution's record: ""
// when it holds every record.
func (w *Writer) Note() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	if w.dropped > 0 {
		parts = append(parts, fmt.Sprintf("log size limit (%d bytes) reached: %d output records dropped", w.max, w.dropped))
	}
	if w.lostTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d records could not be written to the log (%v)", w.lostTotal, w.lastErr))
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return parts[0] + "; " + parts[1]
}

// Reader reads a log incrementally: each Next call returns the complete
// records appended since the last call, at most about ReadChunk bytes of
// them.
type Reader struct {
	path string
	off  int64
	buf  []byte
}

// ReadChunk is how much a Reader reads at once; a record longer than it
// is read whole.
const ReadChunk = 64 << 10

// maxRecord bounds a record: a line of output is cut at 64 KiB before it
// is logged, which JSON escaping can grow up to six times. A longer line
// is no record of this package and is skipped.
const maxRecord = 1 << 20

// NewReader returns a reader of the log at path, from its start. A log
// that does not exist yet reads as empty.
func NewReader(path string) *Reader { return &Reader{path: path} }

// Next returns the next records of the log, raw JSON lines without their
// newline, up to about ReadChunk bytes; none at the end of the log. The
// lines share a buffer that the next call reuses.
func (r *Reader) Next() ([][]byte, error) {
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for {
		data, err := r.read(f)
		if err != nil {
			return nil, err
		}
		end := bytes.LastIndexByte(data, '\n')
		if end < 0 {
			if len(data) < maxRecord {
				return nil, nil // the end, or a record being written
			}
			// No record: skip to the next line.
			r.off += int64(len(data))
			continue
		}
		r.off += int64(end + 1)
		var out [][]byte
		for _, line := range bytes.Split(data[:end], []byte("\n")) {
			if len(line) > 0 && len(line) < maxRecord {
				out = append(out, line)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

// read reads from r.off up to ReadChunk bytes, more until a newline (up
// to maxRecord) when the chunk holds none.
func (r *Reader) read(f *os.File) ([]byte, error) {
	r.buf = r.buf[:0]
	for len(r.buf) < maxRecord {
		if cap(r.buf)-len(r.buf) < ReadChunk {
			r.buf = append(r.buf, make([]byte, ReadChunk)...)[:len(r.buf)]
		}
		n, err := f.ReadAt(r.buf[len(r.buf):len(r.buf)+ReadChunk], r.off+int64(len(r.buf)))
		r.buf = r.buf[:len(r.buf)+n]
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n == 0 || errors.Is(err, io.EOF) || bytes.IndexByte(r.buf[len(r.buf)-n:], '\n') >= 0 {
			break
		}
	}
	return r.buf, nil
}

// Seq returns the number of the raw record, 0 when it is none.
func Seq(raw []byte) int {
	// Records start with their number; read it without decoding all.
	if rest, ok := bytes.CutPrefix(raw, []byte(`{"seq":`)); ok {
		if i := bytes.IndexByte(rest, ','); i > 0 {
			if n, err := strconv.Atoi(string(rest[:i])); err == nil {
				return n
			}
		}
	}
	var rec struct {
		Seq int `json:"seq"`
	}
	json.Unmarshal(raw, &rec)
	return rec.Seq
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
		return append(b[:0], b[len(b)-max:]...)
	}
	return b
}
