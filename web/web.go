package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/internal/lockout"
	"github.com/corralrun/corral/service"
)

// Defaults applied to the zero values of a Config.
const (
	DefaultSessionTTL = 12 * time.Hour
	DefaultLivePoll   = time.Second
)

// Config configures the web UI. Only Service is required.
type Config struct {
	// Service is the task service the UI shows and steers.
	Service *service.Service
	// Token is the service's API token. The login page asks for it and
	// compares it in constant time; a session cookie then stands for it.
	// Empty means no login: every visitor gets a session at once (serve
	// only on loopback then, as the API is open too).
	Token string
	// SecureCookies sets the Secure attribute on the session cookie even
	// for requests that did not come over TLS. Requests that came over
	// TLS, directly or through a trusted proxy that says so (see
	// api.Config.TrustedProxies), always get it.
	SecureCookies bool
	// Lockout throttles wrong tokens at the login form; share it with the
	// API so that both count the same guesses. Nil means one of the UI's
	// own.
	Lockout *lockout.Guard
	// SessionTTL is how long a login lasts; zero means 12 hours.
	SessionTTL time.Duration
	// LivePoll is how often live pages (the executions list, the agents'
	// capacity) look for changes; zero means one second.
	LivePoll time.Duration
	// Logger receives failures of the UI's own requests; nil discards them.
	Logger *slog.Logger
	// Now is the UI's clock; nil means time.Now.
	Now func() time.Time
}

// UI is the web UI of the task service, an http.Handler meant to be
// mounted at / of the API server (api.Config.UI), with SessionAuth as the
// API's api.Config.SessionAuth.
//
// It serves server-rendered pages with a little script for live updates:
// agents with their capacity, executions (a live list, and the detail of
// one with its output streamed while it runs), schedules, a chart of runs
// and durations, and forms to create agents and schedules and to submit,
// cancel and retry tasks. Every asset is embedded: it works offline.
//
// Every page needs a session, made by the login page from the API token;
// a request with the bearer token is admitted too. Every request that
// changes state must come from the UI's own origin (Sec-Fetch-Site or
// Origin) and carry the session's CSRF token; the session cookie is
// HttpOnly, SameSite=Strict, and Secure over TLS. A logout is recorded in
// the service's database: it holds on every worker and across restarts.
// The Host of a request is checked by the API server the UI is mounted
// on. Its methods are safe for concurrent use.
type UI struct {
	cfg      Config
	svc      *service.Service
	log      *slog.Logger
	now      func() time.Time
	sess     *sessions
	lock     *lockout.Guard
	xorigin  *http.CrossOriginProtection
	mux      *http.ServeMux
	pages    map[string]*template.Template
	static   fs.FS
	assetVer string
	// agentsLive is the agents table the live dashboards share.
	agentsLive *sharedAgents
}

// New returns the UI for cfg.
func New(cfg Config) (*UI, error) {
	if cfg.Service == nil {
		return nil, errors.New("web: no service given")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.LivePoll <= 0 {
		cfg.LivePoll = DefaultLivePoll
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	u := &UI{cfg: cfg, svc: cfg.Service, log: cfg.Logger, now: cfg.Now, mux: http.NewServeMux()}
	u.agentsLive = &sharedAgents{u: u}
	u.sess = newSessions(cfg.Token, cfg.SessionTTL, cfg.Now)
	u.lock = cfg.Lockout
	if u.lock == nil {
		u.lock = &lockout.Guard{}
	}
	u.xorigin = http.NewCrossOriginProtection()
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, fmt.Errorf("web: embedded assets: %w", err)
	}
	u.static = static
	u.assetVer, err = assetVersion(static)
	if err != nil {
		return nil, fmt.Errorf("web: embedded assets: %w", err)
	}
	if u.pages, err = parseTemplates(u); err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	u.routes()
	return u, nil
}

func (u *UI) routes() {
	m := u.mux
	m.Handle("GET /static/", http.StripPrefix("/static/", u.staticHandler()))
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})
	m.HandleFunc("GET /login", u.loginPage)
	m.HandleFunc("POST /login", u.login)
	m.HandleFunc("POST /logout", u.page(u.logout))

	m.HandleFunc("GET /{$}", u.page(u.agentsPage))
	m.HandleFunc("GET /agents", u.page(func(w http.ResponseWriter, r *http.Request, p *page) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}))
	m.HandleFunc("GET /agents/new", u.page(u.newAgentPage))
	m.HandleFunc("POST /agents", u.page(u.createAgent))
	m.HandleFunc("GET /agents/{name}", u.page(u.editAgentPage))
	m.HandleFunc("POST /agents/{name}", u.page(u.updateAgent))
	m.HandleFunc("POST /agents/{name}/delete", u.page(u.deleteAgent))
	m.HandleFunc("GET /ui/live/agents", u.page(u.liveAgents))

	m.HandleFunc("GET /tasks/new", u.page(u.taskPage))
	m.HandleFunc("POST /tasks", u.page(u.submitTask))

	m.HandleFunc("GET /executions", u.page(u.executionsPage))
	m.HandleFunc("GET /ui/live/executions", u.page(u.liveExecutions))
	m.HandleFunc("GET /executions/{id}", u.page(u.executionPage))
	m.HandleFunc("GET /executions/{id}/summary", u.page(u.executionSummary))
	m.HandleFunc("GET /executions/{id}/log", u.page(u.executionLog))
	m.HandleFunc("POST /executions/{id}/cancel", u.page(u.cancelExecution))
	m.HandleFunc("POST /executions/{id}/retry", u.page(u.retryExecution))

	m.HandleFunc("GET /schedules", u.page(u.schedulesPage))
	m.HandleFunc("POST /schedules", u.page(u.createSchedule))
	m.HandleFunc("POST /schedules/{id}/enable", u.page(u.enableSchedule(true)))
	m.HandleFunc("POST /schedules/{id}/disable", u.page(u.enableSchedule(false)))
	m.HandleFunc("POST /schedules/{id}/trigger", u.page(u.triggerSchedule))
	m.HandleFunc("POST /schedules/{id}/delete", u.page(u.deleteSchedule))

	m.HandleFunc("/", u.page(func(w http.ResponseWriter, r *http.Request, p *page) {
		u.errorPage(w, r, p, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".")
	}))
}

// ServeHTTP implements http.Handler.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	u.mux.ServeHTTP(w, r)
}

// SessionAuth is the hook for api.Config.SessionAuth. It admits every
// request outside /v1/ and /metrics: those are the UI's own, and the UI
// authenticates them itself (a page without a session redirects to the
// login page). A request to the API is admitted when it carries a valid
// session cookie and either uses a safe method (GET, HEAD) or, to change
// state, comes from the UI's own origin with the session's CSRF token in
// the X-CSRF-Token header. Anything else is left to the API's bearer
// token check.
func (u *UI) SessionAuth(r *http.Request) bool {
	if !isAPIPath(r.URL.Path) {
		return true
	}
	ss, ok := u.session(r)
	if !ok {
		return false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	return u.xorigin.Check(r) == nil && u.sess.checkCSRF(ss, r.Header.Get(CSRFHeader))
}

func isAPIPath(p string) bool {
	return p == "/v1" || strings.HasPrefix(p, "/v1/") || p == "/metrics" || p == "/healthz" || p == "/readyz"
}

// session returns the verified session of r's cookie, unless it was
// logged out (on any worker, before any restart). When the database
// cannot say, the session is refused.
func (u *UI) session(r *http.Request) (*session, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil, false
	}
	ss, ok := u.sess.verify(c.Value)
	if !ok || u.cfg.Token == "" {
		return ss, ok
	}
	revoked, err := u.svc.SessionRevoked(r.Context(), u.sess.id(ss))
	if err != nil {
		u.log.Error("web UI: could not look up a session's logout; refusing it", "err", err)
		return nil, false
	}
	return ss, !revoked
}

// setSession issues a session and sets its cookie.
func (u *UI) setSession(w http.ResponseWriter, r *http.Request) *session {
	ss, v := u.sess.issue()
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    v,
		Path:     "/",
		Expires:  ss.expires,
		MaxAge:   int(u.cfg.SessionTTL / time.Second),
		HttpOnly: true,
		Secure:   httpguard.IsTLS(r) || u.cfg.SecureCookies,
		SameSite: http.SameSiteStrictMode,
	})
	return ss
}

func (u *UI) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: httpguard.IsTLS(r) || u.cfg.SecureCookies, SameSite: http.SameSiteStrictMode,
	})
}

// page is what every page template gets besides its own data.
type page struct {
	Title    string
	Nav      string
	CSRF     string
	Auth     bool // a login exists (a token is configured)
	AssetVer string
	Notice   string
	Data     any
	sess     *session
}

// pageHandler handles an authenticated request.
type pageHandler func(w http.ResponseWriter, r *http.Request, p *page)

// page wraps h with authentication and, for methods that change state,
// the cross-origin and CSRF checks.
func (u *UI) page(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				u.internalError(w, r, fmt.Errorf("handler panic: %v", v))
			}
		}()
		p := &page{Auth: u.cfg.Token != "", AssetVer: u.assetVer}
		ss, ok := u.session(r)
		bearer := false
		if got, has := httpguard.BearerToken(r); !ok && u.cfg.Token != "" && has {
			client := httpguard.ClientAddr(r)
			if wait := u.lock.Wait(client); wait > 0 {
				w.Header().Set("Retry-After", lockout.RetryAfter(wait))
				http.Error(w, "too many wrong tokens from your address: retry in "+lockout.RetryAfter(wait)+" seconds", http.StatusTooManyRequests)
				return
			}
			if bearer = tokenMatches(got, u.cfg.Token); bearer {
				u.lock.Succeed(client)
			} else {
				u.lock.Fail(client)
			}
		}
		switch {
		case ok:
		case u.cfg.Token == "":
			ss = u.setSession(w, r)
		case bearer:
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			if strings.HasPrefix(r.URL.Path, "/ui/") {
				http.Error(w, "not logged in: log in at /login", http.StatusUnauthorized)
				return
			}
			// The login form, in place: the address stays the one asked
			// for, and the status says what it is (401) to other clients.
			u.render(w, r, http.StatusUnauthorized, "login", &page{Title: "Log in", AssetVer: u.assetVer, Auth: true, Data: loginData{Next: safeNext(r.URL.RequestURI())}})
			return
		default:
			u.errorPage(w, r, p, http.StatusUnauthorized, "Not logged in", "Your session has ended. Log in again, then repeat what you did.")
			return
		}
		if ss != nil {
			p.sess, p.CSRF = ss, u.sess.csrf(ss)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !bearer {
			if err := u.xorigin.Check(r); err != nil {
				u.errorPage(w, r, p, http.StatusForbidden, "Refused", errCrossOrigin.Error()+".")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			tok := r.Header.Get(CSRFHeader)
			if tok == "" {
				tok = r.PostFormValue("csrf")
			}
			if !u.sess.checkCSRF(ss, tok) {
				u.errorPage(w, r, p, http.StatusForbidden, "Refused", "The form was missing its security token or it was stale. Reload the page and try again.")
				return
			}
		}
		h(w, r, p)
	}
}

// maxForm bounds form bodies: a task input is at most 256 KiB.
const maxForm = 1 << 20

// render writes the page template name with p.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t := u.pages[name]
	if t == nil {
		u.internalError(w, r, fmt.Errorf("no template %s", name))
		return
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		u.internalError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}

// fragment writes the template name (a part of a page) with data.
func (u *UI) fragment(w http.ResponseWriter, name string, data any) {
	var b strings.Builder
	if err := u.pages["fragments"].ExecuteTemplate(&b, name, data); err != nil {
		id := httpguard.ErrorID()
		u.log.Error("web UI request failed", "id", id, "fragment", name, "err", err)
		http.Error(w, "internal error (id "+id+")", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, b.String())
}

// errorPage answers status with a page that says what happened and what
// to do.
func (u *UI) errorPage(w http.ResponseWriter, r *http.Request, p *page, status int, title, msg string) {
	p.Title = title
	p.Data = msg
	u.render(w, r, status, "error", p)
}

// fail answers a failure of the service with the status and words its
// kind calls for.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, p *page, err error) {
	switch {
	case errors.Is(err, service.ErrNotFound):
		u.errorPage(w, r, p, http.StatusNotFound, "Not found", capitalize(err.Error())+".")
	case errors.Is(err, service.ErrClosed):
		u.errorPage(w, r, p, http.StatusServiceUnavailable, "Shutting down", "The service is shutting down. Try again once it has restarted.")
	case errors.Is(err, context.Canceled):
		// The browser went away.
	default:
		id := httpguard.ErrorID()
		u.log.Error("web UI request failed", "id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		u.errorPage(w, r, p, http.StatusInternalServerError, "Something failed", "The service failed: internal error (id "+id+"). The service's log has the cause under this id.")
	}
}

// internalError answers a failure that stops the page from being drawn
// at all: plain text with an id, the cause in the log.
func (u *UI) internalError(w http.ResponseWriter, r *http.Request, err error) {
	id := httpguard.ErrorID()
	u.log.Error("web UI request failed", "id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	http.Error(w, "internal error (id "+id+"): the service's log has the cause under this id", http.StatusInternalServerError)
}

// seeOther redirects a POST to the page that shows its result.
func seeOther(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, path, http.StatusSeeOther)
}

func assetVersion(static fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(static, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:12], err
}

func (u *UI) staticHandler() http.Handler {
	files := http.FileServerFS(u.static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("v") == u.assetVer {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}
