package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/web"
)

const token = "web-test-token-0123456789abcdef"

// stack is the API with the UI mounted, on a real service and a real
// SQLite store, served in-process.
type stack struct {
	t   *testing.T
	st  *sqlite.Store
	svc *service.Service
	ui  *web.UI
	srv *httptest.Server
	tag string
}

type stackOpt struct {
	token   string
	started bool // start the service, so that tasks run
	tls     bool
	proxied bool // the test's own client is a trusted proxy: X-Forwarded-For names the client
	cfg     func(*web.Config)
}

func newStack(t *testing.T, o stackOpt) *stack {
	t.Helper()
	testutil.CheckFDs(t)
	s := &stack{t: t, tag: testutil.Tag(t)}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.st = st
	s.svc, err = service.New(service.Config{Store: st, DataDir: dir, Env: []string{testutil.TagEnvVar(s.tag)}, Heartbeat: 200 * time.Millisecond, CancelPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.started {
		if err := s.svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s.svc.Close(cctx)
			testutil.AssertNoTagged(t, s.tag, 10*time.Second)
		})
	}
	cfg := web.Config{Service: s.svc, Token: o.token, LivePoll: 50 * time.Millisecond}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	s.ui, err = web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acfg := api.Config{Service: s.svc, Token: o.token, UI: s.ui, SessionAuth: s.ui.SessionAuth}
	if o.proxied {
		acfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	h, err := api.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.tls {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// browser is an HTTP client that behaves like a browser for the UI: it
// keeps cookies, does not follow redirects (tests look at them), and sends
// the Origin and Sec-Fetch-Site headers a browser sends on the UI's own
// forms.
type browser struct {
	t      *testing.T
	s      *stack
	c      *http.Client
	origin string
	site   string
	// forwardedFor, if set, is sent as X-Forwarded-For (the stack must
	// trust the test's client as a proxy).
	forwardedFor string
}

func (s *stack) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := new(http.Client)
	*c = *s.srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Timeout = 30 * time.Second
	s.t.Cleanup(c.CloseIdleConnections)
	return &browser{t: s.t, s: s, c: c, origin: s.srv.URL, site: "same-origin"}
}

type resp struct {
	code int
	loc  string
	body string
	h    http.Header
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) resp {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.s.srv.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method != http.MethodGet && method != http.MethodHead {
		if b.origin != "" {
			req.Header.Set("Origin", b.origin)
		}
		if b.site != "" {
			req.Header.Set("Sec-Fetch-Site", b.site)
		}
	}
	if b.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", b.forwardedFor)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{code: res.StatusCode, loc: res.Header.Get("Location"), body: string(data), h: res.Header}
}

func (b *browser) get(path string) resp { b.t.Helper(); return b.do(http.MethodGet, path, nil) }

func (b *browser) post(path string, form url.Values) resp {
	b.t.Helper()
	return b.do(http.MethodPost, path, form)
}

// login logs in with the token and returns the page's CSRF token.
func (b *browser) login() string {
	b.t.Helper()
	r := b.post("/login", url.Values{"token": {token}, "next": {"/"}})
	if r.code != http.StatusSeeOther || r.loc != "/" {
		b.t.Fatalf("login: %d %q %s", r.code, r.loc, r.body)
	}
	return b.csrf("/")
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrf reads the CSRF token from a page.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	r := b.get(path)
	m := csrfMeta.FindStringSubmatch(r.body)
	if r.code != 200 || m == nil {
		b.t.Fatalf("GET %s: %d, no CSRF token:\n%s", path, r.code, r.body)
	}
	return m[1]
}

func itoa(n int) string { return strconv.Itoa(n) }
