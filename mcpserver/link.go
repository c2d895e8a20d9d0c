package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/mcpserver/internal/wire"
)

// A link is what the transport knows of one client connection (the stdio
// stream, or one HTTP session): the tool calls that arrived and are not
// answered yet, in arrival order, and those the client cancelled. The
// transport stamps each tools/call with its link and arrival (see stamp),
// so that the handlers can run a session's serial calls in the order they
// arrived and count their timeouts from then, and it drops the response
// to a call the client cancelled.
type link struct {
	id string

	mu        sync.Mutex
	seq       uint64
	pending   map[string]*arrival // by wire.IDKey
	cancelled map[string]bool
	wake      chan struct{} // closed and replaced when a call ends
}

// arrival is one tools/call seen by the transport.
type arrival struct {
	seq    uint64
	at     time.Time
	serial bool // runs in the session's shell, one at a time
	ended  bool // its handler returned
}

func newLink(id string) *link {
	return &link{id: id, pending: map[string]*arrival{}, cancelled: map[string]bool{}, wake: make(chan struct{})}
}

// arriveHeader carries the stamp to the handler, in the request's
// RequestExtra.Header.
const arriveHeader = "Corral-Arrival"

// arrive records a call the client sent, and returns the stamp that goes
// with it to the handler.
func (l *link) arrive(m wire.Message) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	a := &arrival{seq: l.seq, at: time.Now(), serial: serialCall(m.Params)}
	l.pending[wire.IDKey(m.ID)] = a
	return fmt.Sprintf("%s %d %d %t", l.id, a.seq, a.at.UnixNano(), a.serial)
}

// serialCall reports whether a tools/call runs in the session's shell and
// so waits for the calls before it: run_command in the foreground, and
// reset_session.
func serialCall(params json.RawMessage) bool {
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Background bool `json:"background"`
		} `json:"arguments"`
	}
	json.Unmarshal(params, &p)
	return p.Name == "reset_session" || (p.Name == "run_command" && !p.Arguments.Background)
}

// cancel records that the client cancelled a call it had sent.
func (l *link) cancel(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := wire.IDKey(id); l.pending[k] != nil {
		l.cancelled[k] = true
	}
}

// answered records that the call with the given id key is over at the
// transport; it reports whether the client cancelled it, in which case
// its response must not be sent.
func (l *link) answered(key string) (drop bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop = l.cancelled[key]
	delete(l.cancelled, key)
	if l.pending[key] != nil {
		delete(l.pending, key)
		l.wakeLocked()
	}
	return drop
}

// ended records that the handler of the call seq returned.
func (l *link) ended(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.pending {
		if a.seq == seq {
			a.ended = true
		}
	}
	l.wakeLocked()
}

func (l *link) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// turn waits until every serial call that arrived before seq has ended,
// or ctx is done.
func (l *link) turn(ctx context.Context, seq uint64) error {
	for {
		l.mu.Lock()
		wait := l.wake
		ahead := false
		for _, a := range l.pending {
			if a.serial && !a.ended && a.seq < seq {
				ahead = true
				break
			}
		}
		l.mu.Unlock()
		if !ahead {
			return nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idle waits until no call is pending, or ctx is done.
func (l *link) idle(ctx context.Context) {
	for {
		l.mu.Lock()
		wait, n := l.wake, len(l.pending)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return
		}
	}
}

// stamp is a call's arrival as the handler reads it.
type stamp struct {
	link   *link
	seq    uint64
	at     time.Time
	serial bool
}

// stampOf reads the arrival stamp of req, if its transport gave one.
func (s *Server) stampOf(req mcp.Request) (stamp, bool) {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return stamp{}, false
	}
	f := strings.Fields(extra.Header.Get(arriveHeader))
	if len(f) != 4 {
		return stamp{}, false
	}
	seq, err1 := strconv.ParseUint(f[1], 10, 64)
	ns, err2 := strconv.ParseInt(f[2], 10, 64)
	l := s.links.get(f[0])
	if err1 != nil || err2 != nil || l == nil {
		return stamp{}, false
	}
	return stamp{link: l, seq: seq, at: time.Unix(0, ns), serial: f[3] == "true"}, true
}

// stampHeader returns a header holding a stamp, for a transport that has
// no HTTP request of its own.
func stampHeader(v string) http.Header {
	return http.Header{arriveHeader: []string{v}}
}

// links holds the server's live links by id.
type links struct {
	mu   sync.Mutex
	next int
	m    map[string]*link
}

// open registers a link; key names it (an HTTP session id), or empty for
// a fresh name.
func (ls *links) open(key string) *link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*link{}
	}
	if key == "" {
		ls.next++
		key = "stdio-" + strconv.Itoa(ls.next)
	}
	if l := ls.m[key]; l != nil {
		return l
	}
	l := newLink(key)
	ls.m[key] = l
	return l
}

func (ls *links) get(id string) *link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.m[id]
}

func (ls *links) close(id string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.m, id)
}

func (ls *links) all() []*link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]*link, 0, len(ls.m))
	for _, l := range ls.m {
		out = append(out, l)
	}
	return out
}
