package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// API names the model API a request was made to.
type API string

const (
	// Anthropic is the Messages API (POST /v1/messages).
	Anthropic API = "anthropic"
	// OpenAI is the Responses API (POST /v1/responses).
	OpenAI API = "openai"
)

// Server is a fake model API listening on a loopback port. Its methods are
// safe for concurrent use.
type Server struct {
	// URL is the server's base, such as "http://127.0.0.1:41234": Claude
	// Code's ANTHROPIC_BASE_URL, and with "/v1" appended an OpenAI model
	// provider's base_url.
	URL string

	scenario Scenario
	srv      *http.Server
	ln       net.Listener
	quit     chan struct{} // closed by Close: hung streams end
	served   chan struct{} // closed when Serve has returned

	mu       sync.Mutex
	reqs     []*Request
	attempts map[string]int
	arrived  chan struct{} // closed and replaced at each request
	closed   bool
}

// Start starts a server answering with the scenario on 127.0.0.1 and a
// free port. Close stops it.
func Start(sc Scenario) (*Server, error) {
	if sc == nil {
		return nil, errors.New("fakemodel: no scenario")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listening on a loopback port: %w", err)
	}
	return Serve(ln, sc), nil
}

// Serve answers with the scenario on ln, which it closes on Close.
func Serve(ln net.Listener, sc Scenario) *Server {
	s := &Server{
		URL:      "http://" + ln.Addr().String(),
		scenario: sc,
		ln:       ln,
		quit:     make(chan struct{}),
		served:   make(chan struct{}),
		attempts: map[string]int{},
		arrived:  make(chan struct{}),
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		s.srv.Serve(ln)
	}()
	return s
}

// Close stops the server: hung streams end, connections close, and Close
// returns when no handler is running.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.quit)
	s.mu.Unlock()
	err := s.srv.Close()
	<-s.served
	return err
}

// Requests returns the model requests received so far, in order of
// arrival. The requests are shared: do not modify them.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// WaitRequests waits until at least n model requests have arrived, or ctx
// ends, and returns those received.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]*Request, error) {
	for {
		s.mu.Lock()
		reqs, ch := append([]*Request(nil), s.reqs...), s.arrived
		s.mu.Unlock()
		if len(reqs) >= n {
			return reqs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return reqs, fmt.Errorf("fakemodel: %d of %d requests arrived: %w", len(reqs), n, ctx.Err())
		}
	}
}

// ServeHTTP answers one request of either API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var api API
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		api = Anthropic
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		api = OpenAI
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	default:
		writeError(w, Anthropic, Failure("not_found"), 0, r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	req, err := parseRequest(api, body)
	if err != nil {
		writeError(w, api, failBadRequest, 0, err.Error())
		return
	}
	req.Path, req.Header, req.Time = r.URL.Path, r.Header.Clone(), time.Now()
	s.record(req)
	rep := s.scenario(req)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		}
	}
	if rep.Fail != "" && (!rep.InStream || !req.Stream) {
		writeError(w, api, rep.Fail, rep.RetryAfter, req.Model)
		return
	}
	st := &stream{w: w, ctx: r.Context(), quit: s.quit, req: req, rep: &rep}
	switch {
	case api == Anthropic && !req.Stream:
		st.anthropicMessage()
	case api == Anthropic:
		st.anthropic()
	default:
		st.openai()
	}
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := fmt.Sprintf("%s\x00%s\x00%d", req.API, req.opening, req.Step)
	req.Attempt = s.attempts[key]
	s.attempts[key]++
	s.reqs = append(s.reqs, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// stream writes one streamed reply.
type stream struct {
	w    http.ResponseWriter
	ctx  context.Context
	quit chan struct{}
	req  *Request
	rep  *Reply
}

// event writes one Server-Sent Event and flushes it.
func (st *stream) event(name string, data any) {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		b, _ = json.Marshal(d)
	}
	fmt.Fprintf(st.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *stream) start() {
	st.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	st.w.Header().Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
}

// hang holds the stream open, sending nothing, until the client goes away
// or the server closes.
func (st *stream) hang() {
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-st.ctx.Done():
	case <-st.quit:
	}
}

// garbage writes a body that is no stream of the API: broken JSON, an
// unknown event, bytes that are not UTF-8, and no end.
func (st *stream) garbage() {
	st.start()
	io.WriteString(st.w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\n\n")
	io.WriteString(st.w, "data: <html><body>502 Bad Gateway</body></html>\n\n")
	st.w.Write(bytes.Repeat([]byte{0xff, 0xfe, 0x00, '\n'}, 16))
	io.WriteString(st.w, "event: response.created\ndata: not json at all\n\n")
}
