package mcpserver

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/mcpserver/internal/wire"
)

// HTTPOptions configures Handler.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN", the scheme in any case).
	Token string

	// Idle closes a session, with its shell session and background jobs,
	// after this long without a request from its client; zero means 30
	// minutes.
	Idle time.Duration

	// ClientIdle closes a session whose client is gone: one that held an
	// event stream open (as clients that stay connected do) and has had no
	// connection open for this long. Clients such as the MCP TypeScript
	// SDK close their stream and never send DELETE; this is how their
	// sessions, and the jobs in them, end. Zero means one minute; negative
	// turns it off, leaving Idle.
	ClientIdle time.Duration

	// AllowOrigins lists the origins (scheme://host[:port]) a browser may
	// call the server from, besides loopback ones. A request whose Origin
	// header is neither is refused with 403, as MCP requires against DNS
	// rebinding and cross-site requests; a request without Origin (a
	// client other than a browser) is not refused for it.
	AllowOrigins []string
}

// ParseOrigin checks an AllowOrigins entry and returns it in the form a
// browser sends: scheme://host[:port], in lower case, no path.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], such as https://app.example.com", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// Handler returns an http.Handler serving MCP's streamable HTTP transport
// at any path. In front of the SDK's own handler it checks the Origin
// header and the bearer token, reads each POST body within
// MaxMessageBytes and checks its message (a malformed one gets HTTP 400
// with a JSON-RPC error; the session goes on), answers 400 to a POST
// without an Mcp-Session-Id header other than initialize, runs each
// session's serial calls in arrival order (see order.go), drops the response to a call
// the client cancelled, reaps the sessions of clients that are gone (see
// HTTPOptions), and answers 503 once Shutdown began. Bad options panic;
// check AllowOrigins with ParseOrigin first.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	if o.Idle <= 0 {
		o.Idle = 30 * time.Minute
	}
	if o.ClientIdle == 0 {
		o.ClientIdle = time.Minute
	}
	f := &httpFront{s: s, o: o, allow: map[string]bool{}, clients: map[string]*presence{}}
	for _, a := range o.AllowOrigins {
		origin, err := ParseOrigin(a)
		if err != nil {
			panic("mcpserver: HTTPOptions.AllowOrigins: " + err.Error())
		}
		f.allow[origin] = true
	}
	f.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      o.Idle,
		Logger:              s.logger,
		MaxRequestBodyBytes: MaxMessageBytes,
	})
	if o.ClientIdle > 0 {
		s.startReaper(f)
	}
	return f
}

const sessionHeader = "Mcp-Session-Id"

// httpFront stands before the SDK's handler.
type httpFront struct {
	s     *Server
	o     HTTPOptions
	allow map[string]bool
	sdk   http.Handler

	mu      sync.Mutex
	clients map[string]*presence // by session id
}

// presence is what the front knows of a session's client: how many of its
// requests are open, whether it ever held an event stream, and when its
// last request ended.
type presence struct {
	open      int
	hadStream bool
	last      time.Time
}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !f.originOK(origin) {
		rpcError(w, http.StatusForbidden, nil, wire.CodeInvalidRequest, fmt.Sprintf("origin %s is not allowed: corral mcp accepts browsers on loopback origins only, and those named with --allow-origin", origin))
		return
	}
	if f.o.Token != "" && !bearerOK(r.Header.Get("Authorization"), f.o.Token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
		rpcError(w, http.StatusUnauthorized, nil, wire.CodeInvalidRequest, "unauthorized: send the server's token as Authorization: Bearer TOKEN")
		return
	}
	if f.s.isStopping() {
		rpcError(w, http.StatusServiceUnavailable, nil, wire.CodeInternalError, errShuttingDown.Error())
		return
	}
	sid := r.Header.Get(sessionHeader)
	if sid != "" {
		defer f.track(sid, r.Method == http.MethodGet)()
	}
	if r.Method != http.MethodPost {
		if sid == "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
			rpcError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "bad request: "+r.Method+" needs the Mcp-Session-Id header the server returned from initialize")
			return
		}
		pw := &plainErrors{ResponseWriter: w}
		f.sdk.ServeHTTP(pw, r)
		pw.finish()
		return
	}
	f.post(w, r, sid)
}

// post checks a POST's message, then hands it to the SDK.
func (f *httpFront) post(w http.ResponseWriter, r *http.Request, sid string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			rpcError(w, http.StatusRequestEntityTooLarge, nil, wire.CodeInvalidRequest, "invalid request: the message is longer than the 8 MiB limit; commands are limited to 1 MiB: write a long script to a file and run the file")
			return
		}
		rpcError(w, http.StatusBadRequest, nil, wire.CodeParseError, "parse error: reading the request body: "+err.Error())
		return
	}
	m, werr := wire.Check(body)
	if werr != nil {
		rpcError(w, http.StatusBadRequest, werr.ID, werr.Code, werr.Message)
		return
	}
	if sid == "" && !(m.Kind == wire.Request && m.Method == "initialize") {
		rpcError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidRequest, "bad request: no Mcp-Session-Id header: send initialize first, then the session id it returned with every request")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var l *link
	if sid != "" {
		l = f.s.links.get(httpLink(sid))
	}
	switch {
	case l == nil:
	case m.Kind == wire.Request && m.Method == "tools/call":
		l.arrive(m.ID, httpKey(r))
		defer l.answered(wire.IDKey(m.ID))
		w = &eventFilter{ResponseWriter: w, link: l}
	case m.Kind == wire.Notification && m.Method == "notifications/cancelled":
		if id, ok := wire.CancelledID(m.Params); ok {
			l.cancel(id)
		}
	}
	if sid == "" {
		w = &sessionStart{ResponseWriter: w, f: f}
	}
	pw := &plainErrors{ResponseWriter: w, id: m.ID}
	f.sdk.ServeHTTP(pw, r)
	pw.finish()
}

func httpLink(sid string) string { return "http-" + sid }

// track counts an open request of session sid; the returned function
// ends it.
func (f *httpFront) track(sid string, stream bool) func() {
	f.mu.Lock()
	p := f.clients[sid]
	if p == nil {
		p = &presence{}
		f.clients[sid] = p
	}
	p.open++
	p.hadStream = p.hadStream || stream
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		p.open--
		p.last = time.Now()
		f.mu.Unlock()
	}
}

// originOK reports whether a browser at origin may call the server.
func (f *httpFront) originOK(origin string) bool {
	o, err := ParseOrigin(origin)
	if err != nil {
		return false // "null" and other opaque origins
	}
	if f.allow[o] {
		return true
	}
	u, _ := url.Parse(o)
	return httpguard.IsLoopback(u.Hostname())
}

// bearerOK checks an Authorization header against token, the scheme in
// any case (RFC 9110 makes it case-insensitive).
func bearerOK(h, token string) bool {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}

// rpcError answers with a JSON-RPC error in an HTTP error status.
func rpcError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write((&wire.Error{ID: id, Code: code, Message: msg}).Encode())
}

// plainErrors turns the SDK's plain-text error answers (an unknown method,
// an unknown session) into JSON-RPC errors, which clients can read.
type plainErrors struct {
	http.ResponseWriter
	id     json.RawMessage
	status int // set when an error is held back
	text   bytes.Buffer
}

func (w *plainErrors) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrors) Write(p []byte) (int, error) {
	if w.status != 0 {
		return w.text.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *plainErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the error held back, if any.
func (w *plainErrors) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.text.String())
	code := wire.CodeInvalidRequest
	switch {
	case strings.Contains(msg, "not handled") || strings.Contains(msg, "unsupported"):
		code = wire.CodeMethodNotFound
	case w.status == http.StatusNotFound:
		msg += ": the session ended (closed, idle or its client gone); initialize a new one"
	}
	w.Header().Del("X-Content-Type-Options")
	rpcError(w.ResponseWriter, w.status, w.id, code, msg)
}

// sessionStart learns the id of a session the SDK creates, when it
// answers initialize, and opens the session's link.
type sessionStart struct {
	http.ResponseWriter
	f    *httpFront
	seen bool
}

func (w *sessionStart) WriteHeader(code int) {
	w.learn()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStart) Write(p []byte) (int, error) {
	w.learn()
	return w.ResponseWriter.Write(p)
}

func (w *sessionStart) learn() {
	if w.seen {
		return
	}
	w.seen = true
	if sid := w.Header().Get(sessionHeader); sid != "" {
		w.f.s.links.open(httpLink(sid))
	}
}

func (w *sessionStart) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// eventFilter passes a call's event stream through, recording when the
// response is written, and drops the response to a call the client
// cancelled. The SDK writes each event with one Write.
type eventFilter struct {
	http.ResponseWriter
	link *link
}

func (w *eventFilter) Write(p []byte) (int, error) {
	if key, ok := responseKey(p); ok && w.link.answered(key) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *eventFilter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// responseKey reads the id of the JSON-RPC response an SSE event (or a
// JSON body) carries.
func responseKey(p []byte) (string, bool) {
	data := p
	if i := bytes.Index(p, []byte("\ndata: ")); i >= 0 {
		data = p[i+len("\ndata: "):]
	} else if bytes.HasPrefix(p, []byte("data: ")) {
		data = p[len("data: "):]
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &msg) != nil || msg.ID == nil || (msg.Result == nil && msg.Error == nil) {
		return "", false
	}
	return wire.IDKey(msg.ID), true
}

// startReaper closes, every few seconds, the sessions whose client is
// gone, and forgets the sessions that ended.
func (s *Server) startReaper(f *httpFront) {
	every := min(max(f.o.ClientIdle/4, 10*time.Millisecond), 5*time.Second)
	stop := make(chan struct{})
	s.mu.Lock()
	s.reapers = append(s.reapers, stop)
	s.mu.Unlock()
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				f.reap()
			}
		}
	}()
}

// reap closes the sessions of clients gone for ClientIdle.
func (f *httpFront) reap() {
	live := map[string]*mcp.ServerSession{}
	for ss := range f.s.mcp.Sessions() {
		if id := ss.ID(); id != "" {
			live[id] = ss
		}
	}
	var gone []*mcp.ServerSession
	f.mu.Lock()
	for sid, p := range f.clients {
		ss := live[sid]
		switch {
		case ss == nil && p.open == 0:
			delete(f.clients, sid)
			f.s.links.close(httpLink(sid))
		case ss != nil && p.hadStream && p.open == 0 && time.Since(p.last) >= f.o.ClientIdle:
			delete(f.clients, sid)
			gone = append(gone, ss)
		}
	}
	f.mu.Unlock()
	for _, l := range f.s.links.all() {
		if sid, ok := strings.CutPrefix(l.id, "http-"); ok && live[sid] == nil {
			f.s.links.close(l.id)
		}
	}
	for _, ss := range gone {
		f.s.logger.Info("closing the session of a client that is gone", "session", ss.ID())
		ss.Close()
		f.s.links.close(httpLink(ss.ID()))
	}
}
