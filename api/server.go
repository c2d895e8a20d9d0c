package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/internal/lockout"
	"github.com/corralrun/corral/service"
)

// DefaultMaxBody bounds request bodies.
//
// /healthz and /readyz need no token: /healthz answers 200 while the
// process serves HTTP (liveness), and says nothing else; /readyz answers
// 200 only while the worker can take work (its database answers, its
// engine runs, its lease is held) and 503 otherwise (readiness), with the
// worker's id and the reason only to a request that carries the token.
const DefaultMaxBody = 1 << 20

// Config configures a Server. Only Service is required.
type Config struct {
	Service *service.Service
	// Token is the bearer token every route but /healthz requires. Empty
	// disables authentication; bind only to loopback then.
	Token string
	// UI, if set, serves everything outside /v1, /healthz, /readyz and /metrics
	// (the web UI). It sits behind the same authentication, except that
	// SessionAuth may admit its requests.
	UI http.Handler
	// SessionAuth, if set, is asked first for each request; true admits
	// the request without a bearer token (a session cookie of the UI).
	SessionAuth func(*http.Request) bool
	// MaxBodyBytes bounds request bodies; zero means 1 MiB.
	MaxBodyBytes int64
	// Logger receives request failures; nil discards them.
	Logger *slog.Logger
	// PublicHosts are the host names clients may reach the service by,
	// besides loopback names and IP addresses (corral serve
	// --public-host). A request with any other Host is refused (421), so
	// that a web page that rebinds its own name to the service's address
	// gets nothing.
	PublicHosts []string
	// TrustedProxies are the reverse proxies in front of the service: from
	// them, the client's address is read from X-Forwarded-For and TLS
	// from X-Forwarded-Proto (corral serve --trusted-proxy).
	TrustedProxies []netip.Prefix
	// Lockout throttles wrong tokens; share it with the web UI so that
	// both count the same guesses. Nil means one of the Server's own.
	Lockout *lockout.Guard
}

// Server is the HTTP API. It is an http.Handler.
type Server struct {
	cfg     Config
	svc     *service.Service
	mux     *http.ServeMux
	tokenH  [32]byte
	log     *slog.Logger
	maxBody int64
	guard   *httpguard.Guard
	lock    *lockout.Guard
}

// New returns the API server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, errors.New("api: no service given")
	}
	s := &Server{cfg: cfg, svc: cfg.Service, mux: http.NewServeMux(), log: cfg.Logger, maxBody: cfg.MaxBodyBytes}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.tokenH = sha256.Sum256([]byte(cfg.Token))
	s.guard = &httpguard.Guard{PublicHosts: cfg.PublicHosts, TrustedProxies: cfg.TrustedProxies}
	s.lock = cfg.Lockout
	if s.lock == nil {
		s.lock = &lockout.Guard{}
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /healthz", s.health)
	m.HandleFunc("GET /readyz", s.ready)
	m.HandleFunc("GET /metrics", s.auth(s.metrics))

	m.HandleFunc("GET /v1/agents", s.auth(s.listAgents))
	m.HandleFunc("POST /v1/agents", s.auth(s.createAgent))
	m.HandleFunc("GET /v1/agents/{name}", s.auth(s.getAgent))
	m.HandleFunc("PATCH /v1/agents/{name}", s.auth(s.patchAgent))
	m.HandleFunc("DELETE /v1/agents/{name}", s.auth(s.deleteAgent))
	m.HandleFunc("POST /v1/agents/{name}/tasks", s.auth(s.submit))
	m.HandleFunc("GET /v1/agents/{name}/slots", s.auth(s.slots))
	m.HandleFunc("GET /v1/agents/{name}/spend", s.auth(s.spend))

	m.HandleFunc("GET /v1/schedules", s.auth(s.listSchedules))
	m.HandleFunc("GET /v1/agents/{name}/schedules", s.auth(s.listSchedules))
	m.HandleFunc("POST /v1/agents/{name}/schedules", s.auth(s.createSchedule))
	m.HandleFunc("GET /v1/agents/{name}/schedules/{id}", s.auth(s.getSchedule))
	m.HandleFunc("PATCH /v1/agents/{name}/schedules/{id}", s.auth(s.patchSchedule))
	m.HandleFunc("DELETE /v1/agents/{name}/schedules/{id}", s.auth(s.deleteSchedule))
	m.HandleFunc("POST /v1/agents/{name}/schedules/{id}/trigger", s.auth(s.triggerSchedule))

	m.HandleFunc("GET /v1/executions", s.auth(s.listExecutions))
	m.HandleFunc("GET /v1/executions/{id}", s.auth(s.getExecution))
	m.HandleFunc("POST /v1/executions/{id}/cancel", s.auth(s.cancel))
	m.HandleFunc("POST /v1/executions/{id}/retry", s.auth(s.retry))
	m.HandleFunc("GET /v1/executions/{id}/events", s.auth(s.events))
	m.HandleFunc("GET /v1/executions/{id}/webhooks", s.auth(s.deliveries))

	m.HandleFunc("/v1/", s.auth(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s; see docs/api.md", r.Method, r.URL.Path))
	}))
	m.HandleFunc("/", s.auth(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.UI != nil {
			s.cfg.UI.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "not_found", "no web UI here; the API is under /v1 (see docs/api.md)")
	}))
}

// ServeHTTP implements http.Handler. Before any handler, it refuses a
// Host that is not served (421), and, on the API, a request that changes
// state without Content-Type: application/json (415) or from another
// origin (403): a web page can send neither, in any auth mode.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.internalError(w, r, fmt.Errorf("handler panic: %v", v))
		}
	}()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	r = s.guard.Forwarded(r)
	if err := s.guard.CheckHost(r); err != nil {
		writeError(w, http.StatusMisdirectedRequest, "bad_host", err.Error())
		return
	}
	if isAPIPath(r.URL.Path) {
		switch err := s.guard.CheckWrite(r); {
		case errors.Is(err, httpguard.ErrContentType):
			writeError(w, http.StatusUnsupportedMediaType, "bad_content_type", err.Error())
			return
		case err != nil:
			writeError(w, http.StatusForbidden, "cross_origin", err.Error()+": the API takes requests from its own web UI and from programs, not from other sites")
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// isAPIPath reports whether p is served by the API rather than the UI.
func isAPIPath(p string) bool {
	return p == "/v1" || strings.HasPrefix(p, "/v1/") || p == "/metrics" || p == "/healthz" || p == "/readyz"
}

// auth admits requests with the bearer token (or a UI session). A client
// that guessed wrong too often is answered 429 with Retry-After, before
// its token is looked at.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r) {
			h(w, r)
		}
	}
}

// authorized reports whether r carries the token or a session; otherwise
// it has answered.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token == "" || (s.cfg.SessionAuth != nil && s.cfg.SessionAuth(r)) {
		return true
	}
	client := httpguard.ClientAddr(r)
	if wait := s.lock.Wait(client); wait > 0 {
		w.Header().Set("Retry-After", lockout.RetryAfter(wait))
		writeError(w, http.StatusTooManyRequests, "locked_out", fmt.Sprintf("too many wrong tokens from your address: retry in %s seconds", lockout.RetryAfter(wait)))
		return false
	}
	got, presented := httpguard.BearerToken(r)
	gotH := sha256.Sum256([]byte(got))
	if !presented || subtle.ConstantTimeCompare(gotH[:], s.tokenH[:]) != 1 {
		if presented {
			s.lock.Fail(client)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token: send \"Authorization: Bearer TOKEN\" (the token is in CORRAL_TOKEN or the data directory's token file)")
		return false
	}
	s.lock.Succeed(client)
	return true
}

// internalError logs err with a fresh id and answers 500 with the id
// only: the cause stays in the server's log.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	id := httpguard.ErrorID()
	s.log.Error("request failed", "id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal", "internal error (id "+id+"): the service's log has the cause under this id")
}

// Error is the body of every error answer.
type Error struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// Execution is the recorded execution of a rejected task (429).
	Execution *corral.Execution `json:"execution,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var e Error
	e.Error.Code, e.Error.Message = code, msg
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	v = public(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// fail answers err with the status its kind calls for.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var rej *service.RejectedError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &rej):
		var e Error
		e.Error.Code, e.Error.Message = "at_capacity", rej.Error()
		if !rej.RetryAt.IsZero() {
			e.Error.Code = "budget_spent"
			w.Header().Set("Retry-After", strconv.Itoa(max(int(time.Until(rej.RetryAt).Seconds()+0.999), 1)))
		}
		e.Execution = rej.Execution
		writeJSON(w, http.StatusTooManyRequests, e)
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
	case errors.Is(err, service.ErrInvalid):
		writeError(w, http.StatusBadRequest, "invalid", err.Error())
	case errors.Is(err, service.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, service.ErrExists):
		writeError(w, http.StatusConflict, "exists", err.Error())
	case errors.Is(err, service.ErrBusy):
		writeError(w, http.StatusConflict, "busy", err.Error())
	case errors.Is(err, service.ErrLimit):
		writeError(w, http.StatusConflict, "limit", err.Error())
	case errors.Is(err, service.ErrConflict):
		writeError(w, http.StatusConflict, "conflict", err.Error())
	case errors.Is(err, service.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "closing", "the service is shutting down; retry on another worker or after restart")
	case errors.Is(err, context.Canceled), r.Context().Err() != nil:
		// The client went away (or its deadline passed) while the
		// service worked: whatever the store answered, that is not the
		// service's fault, and nobody reads the answer.
		writeError(w, 499, "cancelled", "request cancelled")
	default:
		s.internalError(w, r, err)
	}
}

// decode reads a JSON body strictly into v.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !httpguard.IsJSON(ct) {
		return fmt.Errorf("%w: Content-Type %q: send application/json", service.ErrInvalid, ct)
	}
	body := http.MaxBytesReader(w, r.Body, s.maxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: empty body: send a JSON object", service.ErrInvalid)
		}
		return fmt.Errorf("%w: body is not the JSON expected: %v", service.ErrInvalid, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: body has data after the JSON object", service.ErrInvalid)
	}
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready answers 200 while the worker can take work (started, not
// shutting down, lease held, database answering), 503 otherwise: a load
// balancer sends requests elsewhere. The worker's id and the reason are
// only for a request that carries the token (or a session).
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	err := s.svc.Ready(ctx)
	detail := r.Header.Get("Authorization") != "" || s.cfg.Token == "" || (s.cfg.SessionAuth != nil && s.cfg.SessionAuth(r))
	if detail && !s.authorized(w, r) {
		return
	}
	status, body := http.StatusOK, map[string]string{"status": "ready"}
	if err != nil {
		status, body = http.StatusServiceUnavailable, map[string]string{"status": "unavailable"}
	}
	if detail {
		body["worker"] = s.svc.WorkerID()
		if err != nil {
			body["reason"] = err.Error()
		}
	}
	writeJSON(w, status, body)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := s.svc.WriteMetrics(r.Context(), w); err != nil {
		s.fail(w, r, err)
	}
}
