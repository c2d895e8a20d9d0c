package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/mcpserver/internal/wire"
)

// How the calls of a connection keep their order: this file is the whole
// of it.
//
// A client may send calls faster than they run, and the SDK starts each
// call's handler in a goroutine of its own, so handlers start in no
// particular order. The calls that run in the session's shell (run_command
// in the foreground, and reset_session) must run one at a time in the
// order they arrived, their timeouts counted from their arrival, and
// waited_ms must say how long they waited. One mechanism does it, the
// line of each link (a client connection: the stdio stream, or one HTTP
// session):
//
//  1. The transport enters each tools/call in its link's line the moment it
//     reads the message (arrive): its place and its arrival time. The line
//     knows the call by the RequestExtra the SDK will hand its handler
//     (callKey): the stdio transport makes one for each message; over HTTP
//     the SDK makes it, around the header map of the POST the front passed
//     on. Only the identity of that map is used: nothing is written into it.
//  2. The server's middleware claims the call when its handler starts
//     (claim), and marks it ended when the handler returns. A call whose
//     tool never touches the shell is free at once: nothing waits for it.
//  3. run_command learns from its arguments whether it runs in the
//     background (free) or in the shell; a call that runs in the shell, and
//     reset_session, wait their turn: until every call that arrived before
//     them has ended or is free. A call that is neither yet (its handler has
//     not started) holds the calls behind it, so handlers that start out of
//     order still run in order.
//  4. The shell session then counts the timeout from the arrival
//     (shell.Request.Since) and reports the wait. Its own lock only orders
//     its direct callers: calls reach it from here one at a time.
//  5. The transport takes the call out of the line when its response is
//     written, or dropped because the client cancelled the call
//     (answered), or, over HTTP, when its POST ends.
//
// Each message is parsed once on stdio (wire.Check, from which the
// transport builds the SDK's message); over HTTP the SDK reads the body
// again, since its handler takes only the raw request.

// A link is what the transport knows of one client connection: its line
// of tool calls that arrived and are not answered yet, and those the
// client cancelled.
type link struct {
	id   string
	line *links // holds the calls not yet claimed, by key

	mu        sync.Mutex
	seq       uint64
	pending   map[string]*arrival // by wire.IDKey
	cancelled map[string]bool
	wake      chan struct{} // closed and replaced when a call frees, ends or leaves
}

// arrival is one tools/call in its link's line.
type arrival struct {
	link  *link
	seq   uint64
	at    time.Time // when the transport read it
	idKey string
	key   any  // callKey, until claimed
	free  bool // runs outside the shell: nothing waits for it
	ended bool // its handler returned
}

func newLink(id string, ls *links) *link {
	return &link{id: id, line: ls, pending: map[string]*arrival{}, cancelled: map[string]bool{}, wake: make(chan struct{})}
}

// callKey is what a call is known by between the transport and its
// handler: the RequestExtra the SDK hands the handler, or, when it holds
// a header (HTTP, where the SDK makes the RequestExtra itself), the
// identity of that header map, which is the POST's own.
func callKey(e *mcp.RequestExtra) any {
	if e == nil {
		return nil
	}
	if e.Header != nil {
		return reflect.ValueOf(e.Header).UnsafePointer()
	}
	return e
}

// httpKey is the callKey of the call a POST carries.
func httpKey(r *http.Request) any {
	if r.Header == nil {
		r.Header = http.Header{}
	}
	return callKey(&mcp.RequestExtra{Header: r.Header})
}

// arrive enters a call the client sent in the line, known by key.
func (l *link) arrive(id json.RawMessage, key any) {
	l.mu.Lock()
	l.seq++
	c := &arrival{link: l, seq: l.seq, at: time.Now(), idKey: wire.IDKey(id), key: key}
	l.pending[c.idKey] = c
	l.mu.Unlock()
	l.line.enter(c)
}

// cancel records that the client cancelled a call it had sent.
func (l *link) cancel(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := wire.IDKey(id); l.pending[k] != nil {
		l.cancelled[k] = true
	}
}

// answered takes the call with the given id key out of the line: it is
// over at the transport. It reports whether the client cancelled it, in
// which case its response must not be sent.
func (l *link) answered(key string) (drop bool) {
	l.mu.Lock()
	drop = l.cancelled[key]
	delete(l.cancelled, key)
	c := l.pending[key]
	if c != nil {
		delete(l.pending, key)
		l.wakeLocked()
	}
	l.mu.Unlock()
	if c != nil {
		l.line.leave(c)
	}
	return drop
}

func (l *link) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// idle waits until no call is in the line, or ctx is done.
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

// arrived returns when the transport read the call; the zero time for a
// call no transport entered (nil).
func (c *arrival) arrived() time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.at
}

// setFree says the call runs outside the shell: the calls behind it need
// not wait for it.
func (c *arrival) setFree() {
	if c == nil {
		return
	}
	c.link.mu.Lock()
	defer c.link.mu.Unlock()
	c.free = true
	c.link.wakeLocked()
}

// end records that the call's handler returned.
func (c *arrival) end() {
	if c == nil {
		return
	}
	c.link.mu.Lock()
	defer c.link.mu.Unlock()
	c.ended = true
	c.link.wakeLocked()
}

// turn waits until every call that arrived before c has ended or is free,
// or ctx is done.
func (c *arrival) turn(ctx context.Context) error {
	if c == nil || mutant.ArrivalOrderOff {
		return nil
	}
	l := c.link
	for {
		l.mu.Lock()
		wait, ahead := l.wake, false
		for _, p := range l.pending {
			if p.seq < c.seq && !p.ended && !p.free {
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

// callOfKey holds, in a handler's context, its call in the line.
type callOfKey struct{}

// callOf returns the call of a handler's ctx; nil when no transport
// entered it in a line.
func callOf(ctx context.Context) *arrival {
	c, _ := ctx.Value(callOfKey{}).(*arrival)
	return c
}

// links holds the server's live links by id, and the calls that arrived
// and whose handlers have not claimed them yet, by callKey.
type links struct {
	mu    sync.Mutex
	next  int
	m     map[string]*link
	calls map[any]*arrival
}

// enter makes c claimable by its key.
func (ls *links) enter(c *arrival) {
	if c.key == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.calls == nil {
		ls.calls = map[any]*arrival{}
	}
	ls.calls[c.key] = c
}

// claim returns the call the SDK's request extra e belongs to, and
// forgets its key; nil when no transport entered it.
func (ls *links) claim(e *mcp.RequestExtra) *arrival {
	k := callKey(e)
	if k == nil {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	c := ls.calls[k]
	delete(ls.calls, k)
	return c
}

// leave forgets the key of a call that is over before a handler claimed
// it.
func (ls *links) leave(c *arrival) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if c.key != nil && ls.calls[c.key] == c {
		delete(ls.calls, c.key)
	}
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
	l := newLink(key, ls)
	ls.m[key] = l
	return l
}

func (ls *links) get(id string) *link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.m[id]
}

// close forgets a link, and the keys of its calls not yet claimed.
func (ls *links) close(id string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.m[id]
	delete(ls.m, id)
	if l == nil {
		return
	}
	for k, c := range ls.calls {
		if c.link == l {
			delete(ls.calls, k)
		}
	}
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
