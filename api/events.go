package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/corralrun/corral/internal/sse"
)

// keepAlive is how often an idle event stream sends a comment line, so
// proxies and clients see it alive.
const keepAlive = 15 * time.Second

// events streams an execution's log as Server-Sent Events: a "status"
// event with the execution, then one "log" event per log record (id: its
// sequence number, so Last-Event-ID resumes), then an "end" event with
// the finished execution. With ?follow=false it stops after the replay
// with a "replayed" event holding the execution as it stands.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e, err := s.svc.Execution(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	after := 0
	v := r.Header.Get("Last-Event-ID")
	if q := r.URL.Query().Get("after"); q != "" {
		v = q
	}
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("after/Last-Event-ID %q: want a record number", v))
			return
		}
		after = n
	}
	stream, err := sse.Start(w, 0)
	if err != nil {
		return
	}
	defer stream.End()
	send := stream.Event
	status, _ := json.Marshal(e)
	if send("status", "", status) != nil {
		return
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // no write after the handler returns
	defer close(done)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				stream.KeepAlive()
			}
		}
	}()
	follow := s.svc.Follow
	last := "end"
	if q := r.URL.Query().Get("follow"); q == "false" || q == "0" {
		follow, last = s.svc.Replay, "replayed"
	}
	end, err := follow(r.Context(), id, after, func(seq int, rec []byte) error {
		return send("log", strconv.Itoa(seq), rec)
	})
	if err != nil || end == nil {
		return // the client went away, or the log could not be read
	}
	if last == "replayed" && end.Status.Terminal() {
		last = "end"
	}
	data, _ := json.Marshal(end)
	send(last, "", data)
}
