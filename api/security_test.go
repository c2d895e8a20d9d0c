package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/sqlite"
)

// request builds a request as a client at addr sends it to Host host.
func request(method, path, body, host, addr string, hdr ...string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host, r.RemoteAddr = host, addr
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// openAPI is an API without a token (corral serve --insecure-no-auth),
// the mode in which a browser's cross-site request used to run commands.
func openAPI(t *testing.T) (*api.Server, *service.Service) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Service: svc, PublicHosts: []string{"corral.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, svc
}

// TestABrowserCannotActOnTheAPIInAnyMode: what a web page can make a
// browser send (a CORS-simple POST, a form, a request from another origin,
// a request to its own name rebound to the service) never reaches a
// handler, with or without a token.
func TestABrowserCannotActOnTheAPIInAnyMode(t *testing.T) {
	open, svc := openAPI(t)
	tokenSrv, _, _, _ := newAPI(t, api.Config{})
	agent := `{"name":"evil","kind":"shell"}`
	const local = "127.0.0.1:7070"
	for _, tc := range []struct {
		name string
		r    func() *http.Request
		want int
	}{
		{"no-cors POST with no Content-Type", func() *http.Request { return request("POST", "/v1/agents", agent, local, "127.0.0.1:5000") }, 415},
		{"no-cors POST as text/plain", func() *http.Request {
			return request("POST", "/v1/agents", agent, local, "127.0.0.1:5000", "Content-Type", "text/plain;charset=UTF-8", "Sec-Fetch-Site", "cross-site", "Origin", "http://localhost:9999")
		}, 415},
		{"form POST", func() *http.Request {
			return request("POST", "/v1/agents", "name=evil&kind=shell", local, "127.0.0.1:5000", "Content-Type", "application/x-www-form-urlencoded")
		}, 415},
		{"JSON from another origin", func() *http.Request {
			return request("POST", "/v1/agents", agent, local, "127.0.0.1:5000", "Content-Type", "application/json", "Origin", "http://localhost:9999")
		}, 403},
		{"JSON marked cross-site", func() *http.Request {
			return request("POST", "/v1/agents", agent, local, "127.0.0.1:5000", "Content-Type", "application/json", "Sec-Fetch-Site", "same-site")
		}, 403},
		{"DNS rebinding", func() *http.Request {
			return request("POST", "/v1/agents", agent, "rebind.attacker.example:7070", "127.0.0.1:5000", "Content-Type", "application/json", "Origin", "http://rebind.attacker.example:7070", "Sec-Fetch-Site", "same-origin")
		}, 421},
		{"DNS rebinding, a read", func() *http.Request {
			return request("GET", "/v1/agents", "", "rebind.attacker.example:7070", "127.0.0.1:5000")
		}, 421},
		{"bodyless cancel", func() *http.Request { return request("POST", "/v1/executions/x/cancel", "", local, "127.0.0.1:5000") }, 415},
	} {
		for mode, h := range map[string]http.Handler{"no auth": open, "token": tokenSrv} {
			if rec := serve(h, tc.r()); rec.Code != tc.want {
				t.Errorf("%s, %s: %d %s, want %d", tc.name, mode, rec.Code, rec.Body, tc.want)
			}
		}
	}
	if list, _ := svc.Agents(context.Background()); len(list) != 0 {
		t.Fatalf("an agent was created: %+v", list[0])
	}
	// What programs and the UI send still works.
	for i, host := range []string{local, "localhost:7070", "[::1]:7070", "corral.example.com", "10.0.0.5:7070"} {
		rec := serve(open, request("POST", "/v1/agents", strings.Replace(agent, "evil", "ok"+strconv.Itoa(i), 1), host, "127.0.0.1:5000", "Content-Type", "application/json", "Origin", "http://"+host))
		if rec.Code != 201 {
			t.Errorf("a same-origin JSON request to %s: %d %s", host, rec.Code, rec.Body)
		}
	}
}

// TestWrongTokensLockOutTheirClientOnly: a guesser waits longer after each
// failure (Retry-After in seconds); a client that has not failed is never
// held back; the scheme of the header is case-insensitive.
func TestWrongTokensLockOutTheirClientOnly(t *testing.T) {
	srv, _, _, _ := newAPI(t, api.Config{})
	const guesser, user = "198.51.100.7:4000", "203.0.113.8:5000"
	var rec *httptest.ResponseRecorder
	for i := range 20 {
		rec = serve(srv, request("GET", "/v1/agents", "", "example.com", guesser, "Authorization", "Bearer wrong-"+strconv.Itoa(i)))
		if rec.Code == 429 {
			break
		}
		if rec.Code != 401 {
			t.Fatalf("wrong token %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if rec.Code != 429 {
		t.Fatal("twenty wrong tokens from one address were never held back")
	}
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q is not a number of seconds", rec.Header().Get("Retry-After"))
	}
	if rec := serve(srv, request("GET", "/v1/agents", "", "example.com", guesser, "Authorization", "Bearer "+token)); rec.Code != 429 {
		t.Fatalf("a locked-out address got through: %d", rec.Code)
	}
	if rec := serve(srv, request("GET", "/v1/agents", "", "example.com", user, "Authorization", "bearer "+token)); rec.Code != 200 {
		t.Fatalf("the right token (lower-case scheme) from a clean address: %d %s", rec.Code, rec.Body)
	}
	if rec := serve(srv, request("GET", "/v1/agents", "", "example.com", user, "Authorization", "BEARER  "+token+" ")); rec.Code != 200 {
		t.Fatalf("the right token (upper-case scheme, spaces): %d %s", rec.Code, rec.Body)
	}
}

// TestAnswersCarryNoSecrets: agent env values are write-only, executions
// do not show where their log is or their process handle, internal errors
// are an id, and the probes say nothing to a stranger.
func TestAnswersCarryNoSecrets(t *testing.T) {
	var logBuf bytes.Buffer
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Service: svc, Token: token, PublicHosts: []string{"example.com"}, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	auth := "Bearer " + token
	rec := do(srv, "POST", "/v1/agents", `{"name":"k","kind":"shell","env":{"API_KEY":"sk-very-secret-value","MODE":"fast"}}`, auth)
	if rec.Code != 201 || strings.Contains(rec.Body.String(), "secret-value") || !strings.Contains(rec.Body.String(), `"env_names":["API_KEY","MODE"]`) {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/v1/agents", "/v1/agents/k"} {
		if rec := do(srv, "GET", path, "", auth); strings.Contains(rec.Body.String(), "secret-value") || strings.Contains(rec.Body.String(), "fast") {
			t.Fatalf("GET %s shows env values: %s", path, rec.Body)
		}
	}
	rec = do(srv, "PATCH", "/v1/agents/k", `{"env":{"API_KEY":"sk-replaced-value","MODE":null,"NEW":"1"},"max_parallel_tasks":2}`, auth)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"env_names":["API_KEY","NEW"]`) || strings.Contains(rec.Body.String(), "replaced") {
		t.Fatalf("patch env: %d %s", rec.Code, rec.Body)
	}
	a, _ := svc.Agent(context.Background(), "k")
	if a.Env["API_KEY"] != "sk-replaced-value" || a.Env["NEW"] != "1" || len(a.Env) != 2 || a.MaxParallelTasks != 2 {
		t.Fatalf("stored after patch: %+v", a)
	}
	// A client that sends back what it read changes nothing.
	var shown corral.Agent
	json.Unmarshal(do(srv, "GET", "/v1/agents/k", "", auth).Body.Bytes(), &shown)
	back, _ := json.Marshal(shown)
	if rec := do(srv, "PATCH", "/v1/agents/k", string(back), auth); rec.Code != 200 {
		t.Fatalf("patching back what was read: %d %s", rec.Code, rec.Body)
	}
	if a, _ := svc.Agent(context.Background(), "k"); a.Env["API_KEY"] != "sk-replaced-value" {
		t.Fatalf("a round trip lost the secret: %+v", a.Env)
	}
	if rec := do(srv, "PATCH", "/v1/agents/k", `{"env_names":["X"]}`, auth); rec.Code != 400 {
		t.Fatalf("env_names written: %d %s", rec.Code, rec.Body)
	}

	// Executions: no log path, no process handle.
	adm, err := st.Submit(context.Background(), &store.Submission{Agent: "k", Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	id := adm.Execution.ID
	if _, err := st.Claim(context.Background(), id, svc.WorkerID(), time.Now().UTC(), "/var/lib/corral/logs/"+id+".jsonl"); err != nil {
		t.Fatal(err)
	}
	h := json.RawMessage(`{"pid":4242,"cgroup":"/sys/fs/cgroup/corral/x"}`)
	if err := st.SetRunInfo(context.Background(), id, svc.WorkerID(), store.RunInfo{Handle: h}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/executions/" + id, "/v1/executions?agent=k"} {
		body := do(srv, "GET", path, "", auth).Body.String()
		// The handle's fields by name: its pid's digits alone may turn up
		// in a timestamp's nanoseconds (".070042424Z" did, once).
		if strings.Contains(body, "log_path") || strings.Contains(body, "/var/lib/corral") || strings.Contains(body, "handle") ||
			strings.Contains(body, `"pid"`) || strings.Contains(body, "/sys/fs/cgroup") {
			t.Fatalf("GET %s shows worker internals: %s", path, body)
		}
	}

	// Probes.
	if body := do(srv, "GET", "/healthz", "", "").Body.String(); strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Fatalf("healthz says more than ok: %s", body)
	}
	if body := do(srv, "GET", "/readyz", "", "").Body.String(); strings.Contains(body, svc.WorkerID()) || strings.Contains(body, "reason") {
		t.Fatalf("readyz tells a stranger: %s", body)
	}
	if body := do(srv, "GET", "/readyz", "", auth).Body.String(); !strings.Contains(body, svc.WorkerID()) || !strings.Contains(body, "reason") {
		t.Fatalf("readyz does not tell the token holder: %s", body)
	}

	// An internal error: an id in the answer, the cause in the log.
	st.Close()
	rec = do(srv, "GET", "/v1/agents", "", auth)
	m := regexp.MustCompile(`internal error \(id ([0-9a-f]{12})\)`).FindStringSubmatch(rec.Body.String())
	if rec.Code != 500 || m == nil || strings.Contains(rec.Body.String(), "closed") {
		t.Fatalf("internal error answer: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logBuf.String(), "id="+m[1]) || !strings.Contains(logBuf.String(), "closed") {
		t.Fatalf("the log has no line for id %s with the cause:\n%s", m[1], logBuf.String())
	}
}
