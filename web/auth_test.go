package web_test

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/web"
)

func sessionCookie(t *testing.T, r resp) *http.Cookie {
	t.Helper()
	for _, line := range r.h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err == nil && c.Name == web.CookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie set; headers %v", web.CookieName, r.h)
	return nil
}

func TestPagesAnswer401WithTheLoginFormWithoutASession(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	for _, path := range []string{"/", "/executions?agent=x", "/schedules", "/agents/new", "/tasks/new"} {
		r := b.get(path)
		if r.code != http.StatusUnauthorized || !strings.Contains(r.body, `<input type="hidden" name="next" value="`+template.HTMLEscapeString(path)+`">`) {
			t.Errorf("GET %s: %d, want 401 and the login form coming back here:\n%s", path, r.code, r.body)
		}
	}
	if r := b.get("/ui/live/executions"); r.code != http.StatusUnauthorized {
		t.Errorf("live stream without a session: %d", r.code)
	}
	if r := b.get("/login"); r.code != 200 || !strings.Contains(r.body, `<label for="token">API token</label>`) {
		t.Fatalf("login page: %d\n%s", r.code, r.body)
	}
	if r := b.get("/v1/agents"); r.code != http.StatusUnauthorized {
		t.Fatalf("API without a session or token: %d", r.code)
	}
	if r := b.get("/static/app.css"); r.code != 200 {
		t.Fatalf("style sheet needs no session: %d", r.code)
	}
}

func TestLoginSetsAnHttpOnlySameSiteStrictCookieWithoutTheToken(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	r := b.post("/login", url.Values{"token": {token}, "next": {"/executions?status=failed"}})
	if r.code != http.StatusSeeOther || r.loc != "/executions?status=failed" {
		t.Fatalf("login: %d %q", r.code, r.loc)
	}
	c := sessionCookie(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Fatalf("cookie over plain HTTP: %+v", c)
	}
	if c.MaxAge <= 0 || c.MaxAge > int(web.DefaultSessionTTL/time.Second) {
		t.Fatalf("cookie lifetime: %d", c.MaxAge)
	}
	if strings.Contains(c.Value, token) {
		t.Fatal("the cookie holds the token")
	}
	if r := b.get("/"); r.code != 200 || !strings.Contains(r.body, "<h1>Agents</h1>") {
		t.Fatalf("agents page after login: %d", r.code)
	}
}

func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	s := newStack(t, stackOpt{token: token, tls: true})
	b := s.browser()
	c := sessionCookie(t, b.post("/login", url.Values{"token": {token}}))
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie over TLS: %+v", c)
	}
	s2 := newStack(t, stackOpt{token: token, cfg: func(c *web.Config) { c.SecureCookies = true }})
	if c := sessionCookie(t, s2.browser().post("/login", url.Values{"token": {token}})); !c.Secure {
		t.Fatalf("SecureCookies behind a TLS proxy: %+v", c)
	}
}

func TestLoginRefusesAWrongTokenAndThrottlesRepeatedFailures(t *testing.T) {
	s := newStack(t, stackOpt{token: token, proxied: true})
	b := s.browser()
	r := b.post("/login", url.Values{"token": {token + "x"}})
	if r.code != http.StatusUnauthorized || !strings.Contains(r.body, "not the token of this service") || len(r.h.Values("Set-Cookie")) != 0 {
		t.Fatalf("wrong token: %d %v\n%s", r.code, r.h.Values("Set-Cookie"), r.body)
	}
	for i := 0; r.code != http.StatusTooManyRequests; i++ {
		if i == 20 {
			t.Fatal("twenty wrong tokens from one address were never held back")
		}
		r = b.post("/login", url.Values{"token": {"nope"}})
	}
	if ra, err := strconv.Atoi(r.h.Get("Retry-After")); err != nil || ra < 1 || !strings.Contains(r.body, "Too many wrong tokens") {
		t.Fatalf("held back: Retry-After %q, not whole seconds\n%s", r.h.Get("Retry-After"), r.body)
	}
	if r = b.post("/login", url.Values{"token": {token}}); r.code != http.StatusTooManyRequests {
		t.Fatalf("the guessing address got through while held back: %d", r.code)
	}
	// Another client (behind the same trusted proxy) has not failed: the
	// right token logs it in at once.
	other := s.browser()
	other.forwardedFor = "203.0.113.77"
	if r := other.post("/login", url.Values{"token": {token}}); r.code != http.StatusSeeOther {
		t.Fatalf("the right token from a clean address: %d\n%s", r.code, r.body)
	}
}

func TestLoginIgnoresOffsiteNextTargets(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)",
		"/\t/evil.example", "/%09/evil.example", "/\n/evil.example", "/%2F/evil.example", "/%5Cevil.example", " //evil.example",
		"/\x00/evil.example", "/%00/evil.example", "\t//evil.example", "/login?next=//evil.example", "/%zz"} {
		r := s.browser().post("/login", url.Values{"token": {token}, "next": {next}})
		if r.code != http.StatusSeeOther || r.loc != "/" {
			t.Errorf("next %q: redirected to %q", next, r.loc)
		}
	}
	for _, next := range []string{"/executions?status=failed", "/agents/a.b", "/", "/executions/exe_1#log"} {
		if r := s.browser().post("/login", url.Values{"token": {token}, "next": {next}}); r.loc != next {
			t.Errorf("next %q: redirected to %q", next, r.loc)
		}
	}
	// The address bar's target, as the login form in place carries it.
	if r := s.browser().get("/login?next=%2F%09%2Fevil.example"); !strings.Contains(r.body, `name="next" value="/"`) {
		t.Errorf("the login page kept a tab-smuggled next:\n%s", r.body)
	}
}

func TestStateChangingRequestsNeedTheSessionsCSRFToken(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "a", Kind: corral.KindShell}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	csrf := b.login()
	form := url.Values{"agent": {"a"}, "input": {"echo hi"}}
	if r := b.post("/tasks", form); r.code != http.StatusForbidden || !strings.Contains(r.body, "security token") {
		t.Fatalf("no CSRF token: %d\n%s", r.code, r.body)
	}
	form.Set("csrf", csrf+"x")
	if r := b.post("/tasks", form); r.code != http.StatusForbidden {
		t.Fatalf("wrong CSRF token: %d", r.code)
	}
	other := s.browser()
	form.Set("csrf", other.login())
	if r := b.post("/tasks", form); r.code != http.StatusForbidden {
		t.Fatalf("another session's CSRF token: %d", r.code)
	}
	form.Set("csrf", csrf)
	r := b.post("/tasks", form)
	if r.code != http.StatusSeeOther || !strings.HasPrefix(r.loc, "/executions/") {
		t.Fatalf("with the CSRF token: %d %q\n%s", r.code, r.loc, r.body)
	}
	if r := b.do(http.MethodPost, "/tasks", url.Values{"agent": {"a"}, "input": {"echo hi"}}, web.CSRFHeader, csrf); r.code != http.StatusSeeOther {
		t.Fatalf("CSRF token in the header: %d", r.code)
	}
}

func TestCrossOriginPostsAreRefusedEvenWithTheToken(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	csrf := b.login()
	form := url.Values{"csrf": {csrf}, "agent": {"a"}, "input": {"x"}}
	b.site, b.origin = "cross-site", "https://evil.example"
	if r := b.post("/tasks", form); r.code != http.StatusForbidden || !strings.Contains(r.body, "cross-origin") {
		t.Fatalf("cross-site post: %d\n%s", r.code, r.body)
	}
	b.site = "" // an older browser: Origin only
	if r := b.post("/tasks", form); r.code != http.StatusForbidden {
		t.Fatalf("cross-origin post without Sec-Fetch-Site: %d", r.code)
	}
	if r := b.post("/login", url.Values{"token": {token}}); r.code != http.StatusForbidden {
		t.Fatalf("cross-origin login (login CSRF): %d", r.code)
	}
	if r := b.post("/logout", url.Values{"csrf": {csrf}}); r.code != http.StatusForbidden {
		t.Fatalf("cross-origin logout: %d", r.code)
	}
}

func TestSessionReadsTheAPIButWritesOnlyWithTheCSRFHeader(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "a", Kind: corral.KindShell, Overflow: corral.OverflowQueue}); err != nil {
		t.Fatal(err)
	}
	e, err := s.svc.Submit(ctx, service.Task{Agent: "a", Input: "sleep 100"})
	if err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	csrf := b.login()
	if r := b.get("/v1/executions/" + e.ID); r.code != 200 {
		t.Fatalf("API read with a session: %d", r.code)
	}
	if r := b.get("/v1/executions/" + e.ID + "/events?follow=false"); r.code != 200 || !strings.Contains(r.body, "event: status") {
		t.Fatalf("event stream with a session: %d\n%s", r.code, r.body)
	}
	if r := b.do(http.MethodPost, "/v1/executions/"+e.ID+"/cancel", nil, "Content-Type", "application/json"); r.code != http.StatusUnauthorized {
		t.Fatalf("API write with a session but no CSRF header: %d", r.code)
	}
	b.site, b.origin = "cross-site", "https://evil.example"
	if r := b.do(http.MethodPost, "/v1/executions/"+e.ID+"/cancel", nil, web.CSRFHeader, csrf, "Content-Type", "application/json"); r.code != http.StatusForbidden {
		t.Fatalf("cross-site API write with the CSRF header: %d", r.code)
	}
	b.site, b.origin = "same-origin", s.srv.URL
	if r := b.do(http.MethodPost, "/v1/executions/"+e.ID+"/cancel", nil, web.CSRFHeader, csrf, "Content-Type", "application/json"); r.code != http.StatusAccepted {
		t.Fatalf("API write with the CSRF header: %d %s", r.code, r.body)
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	csrf := b.login()
	u, _ := url.Parse(s.srv.URL)
	stolen := b.c.Jar.Cookies(u)
	r := b.post("/logout", url.Values{"csrf": {csrf}})
	if r.code != http.StatusSeeOther || r.loc != "/login" || sessionCookie(t, r).MaxAge >= 0 {
		t.Fatalf("logout: %d %q %v", r.code, r.loc, r.h.Values("Set-Cookie"))
	}
	if r := b.get("/"); r.code != http.StatusUnauthorized {
		t.Fatalf("after logout: %d", r.code)
	}
	replay := s.browser()
	replay.c.Jar.SetCookies(u, stolen)
	if r := replay.get("/"); r.code != http.StatusUnauthorized {
		t.Fatalf("a copy of the logged-out cookie still works: %d", r.code)
	}
	// Another worker, or this one restarted, knows of the logout too.
	restarted, err := web.New(web.Config{Service: s.svc, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if restarted.SessionAuth(httptestRequest("GET", "/v1/agents", stolen)) {
		t.Fatal("the logged-out cookie works again on a restarted UI")
	}
}

func TestSessionsEndWhenTheTokenChangesOrExpire(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	s := newStack(t, stackOpt{token: token, cfg: func(c *web.Config) { c.Now = clock; c.SessionTTL = time.Hour }})
	b := s.browser()
	b.login()
	u, _ := url.Parse(s.srv.URL)
	cookies := b.c.Jar.Cookies(u)

	other, err := web.New(web.Config{Service: s.svc, Token: "another-token", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	req := httptestRequest("GET", "/v1/agents", cookies)
	if other.SessionAuth(req) {
		t.Fatal("a session made with the old token is accepted with a new one")
	}
	same, _ := web.New(web.Config{Service: s.svc, Token: token, Now: clock})
	if !same.SessionAuth(req) {
		t.Fatal("a session is not accepted after a restart with the same token")
	}
	now = now.Add(time.Hour + time.Second)
	if r := b.get("/"); r.code != http.StatusUnauthorized {
		t.Fatalf("expired session: %d", r.code)
	}
}

func httptestRequest(method, path string, cookies []*http.Cookie) *http.Request {
	req, _ := http.NewRequest(method, "http://127.0.0.1"+path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

func TestBearerTokenOpensPagesToo(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	if r := b.do(http.MethodGet, "/schedules", nil, "Authorization", "Bearer "+token); r.code != 200 {
		t.Fatalf("page with the bearer token: %d", r.code)
	}
	if r := b.do(http.MethodGet, "/schedules", nil, "Authorization", "Bearer wrong"); r.code != http.StatusUnauthorized {
		t.Fatalf("page with a wrong bearer token: %d", r.code)
	}
}

func TestWithoutATokenThereIsNoLoginButStillACSRFCheck(t *testing.T) {
	s := newStack(t, stackOpt{})
	b := s.browser()
	if r := b.get("/login"); r.code != http.StatusSeeOther {
		t.Fatalf("login page without a token: %d", r.code)
	}
	csrf := b.csrf("/")
	if strings.Contains(b.get("/").body, "Log out") {
		t.Fatal("a log out button with nothing to log out of")
	}
	if r := b.post("/schedules", url.Values{"agent": {"x"}}); r.code != http.StatusForbidden {
		t.Fatalf("post without the CSRF token: %d", r.code)
	}
	if r := b.post("/schedules", url.Values{"agent": {"x"}, "csrf": {csrf}}); r.code != http.StatusUnprocessableEntity {
		t.Fatalf("post with the CSRF token: %d", r.code)
	}
}

func TestPagesAreServedWithAStrictContentSecurityPolicy(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	b.login()
	r := b.get("/")
	csp := r.h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || r.h.Get("X-Frame-Options") != "DENY" || r.h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers: %v", r.h)
	}
	if strings.Contains(r.body, "<script>") || strings.Contains(r.body, " style=") || strings.Contains(r.body, " onclick=") {
		t.Error("inline script or style in a page: the CSP would block it")
	}
}
