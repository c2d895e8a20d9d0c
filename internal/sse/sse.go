// Package sse writes Server-Sent Events responses: the headers, events
// whose data may span lines, comments that keep idle streams alive, each
// flushed at once, each under a write deadline: a client that stops
// reading fails the stream after WriteTimeout rather than holding its
// handler (and what the handler holds) forever. A Stream is safe for
// concurrent use, so a keep-alive goroutine can share it with the
// handler.
package sse

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Stream is one event-stream response.
type Stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	mu sync.Mutex
}

// WriteTimeout bounds each write of a stream, its flush included.
const WriteTimeout = 20 * time.Second

// Start begins an event-stream response: it lifts the server's read
// deadline (a stream outlives it, and its expiry would cancel the
// request), replaces the server's write deadline by one per write, writes
// the headers and the status, and, when retry is positive, tells the
// client how soon to reconnect. The connection closes with the stream
// (Connection: close), so that the deadline of its last write, which
// bounds what the server writes after the handler, never outlives it.
func Start(w http.ResponseWriter, retry time.Duration) (*Stream, error) {
	s := &Stream{w: w, rc: http.NewResponseController(w)}
	s.rc.SetReadDeadline(time.Time{})
	s.rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // no buffering in nginx and its kind
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	if retry > 0 {
		return s, s.write([]byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n\n"))
	}
	return s, s.flush()
}

// Event sends one event. Data may hold several lines; each becomes a data
// line, as the format requires. An empty id sends none.
func (s *Stream) Event(event, id string, data []byte) error {
	var b bytes.Buffer
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: " + event + "\n")
	data = bytes.ReplaceAll(data, []byte("\r"), nil)
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return s.write(b.Bytes())
}

// End bounds what the server writes after the handler returns (the end
// of the response) by one more WriteTimeout: a client that stopped
// reading must not hold the connection then either. Call it when the
// handler is done with the stream.
func (s *Stream) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
}

// KeepAlive sends a comment line, which clients ignore, so that proxies
// and clients do not take a quiet stream for a dead one.
func (s *Stream) KeepAlive() error { return s.write([]byte(": keep-alive\n\n")) }

func (s *Stream) write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *Stream) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	return s.rc.Flush()
}
