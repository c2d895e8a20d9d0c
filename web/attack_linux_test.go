package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// attackPage is what a hostile site serves: every way a page can make a
// browser send a state change to the service without its cooperation.
// CORS-simple fetches (no Content-Type, text/plain, a form body), a fetch
// that needs a preflight, and real form posts (a JSON body smuggled
// through enctype="text/plain", a UI form) into frames. Its title becomes
// "done" once every attempt has been answered or refused.
const attackPage = `<!doctype html><title>running</title>
<iframe name="f1"></iframe><iframe name="f2"></iframe><iframe name="f3"></iframe>
<form id="a" method="post" action="TARGET/v1/agents" enctype="text/plain" target="f1"><input name='{"name":"evilform","kind":"shell","x":"' value='"}'></form>
<form id="b" method="post" action="TARGET/tasks" target="f2"><input name="agent" value="victim"><input name="input" value="touch MARKER"></form>
<form id="c" method="post" action="TARGET/v1/agents/victim/tasks" enctype="text/plain" target="f3"><input name='{"input":"touch MARKER","x":"' value='"}'></form>
<script>
const T = "TARGET";
const agent = n => JSON.stringify({name: n, kind: "shell"});
const task = JSON.stringify({input: "touch MARKER"});
const tries = [
  fetch(T + "/v1/agents", {method: "POST", mode: "no-cors", credentials: "include", body: new Blob([agent("evil1")])}),
  fetch(T + "/v1/agents", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: agent("evil2")}),
  fetch(T + "/v1/agents", {method: "POST", mode: "no-cors", credentials: "include", body: new URLSearchParams({name: "evil3", kind: "shell"})}),
  fetch(T + "/v1/agents/victim/tasks", {method: "POST", mode: "no-cors", credentials: "include", body: new Blob([task])}),
  fetch(T + "/v1/agents", {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body: agent("evil4")}),
  fetch(T + "/tasks", {method: "POST", mode: "no-cors", credentials: "include", body: new URLSearchParams({agent: "victim", input: "touch MARKER"})}),
].map(p => p.then(() => "answered", e => "refused: " + e));
let loads = 0, submitted = false;
document.querySelectorAll("iframe").forEach(f => f.addEventListener("load", () => {
  if (submitted && ++loads === 3) document.title = "done";
}));
Promise.all(tries).then(r => {
  window.results = r;
  submitted = true;
  ["a", "b", "c"].forEach(id => document.getElementById(id).submit());
});
</script>`

// TestACrossSitePageCannotActOnTheService is the review's H1 repro in a
// real Chromium: a page served from another loopback port tries to create
// an agent and run a task, with fetches, forms and a DNS-rebinding name,
// against a service without a token and against one with a token and a
// logged-in browser. Nothing is created, nothing runs.
func TestACrossSitePageCannotActOnTheService(t *testing.T) {
	chromium := findChromium(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	dir := t.TempDir()
	corralBin, _ := buildBinaries(t, dir)
	open := servetest.Start(t, corralBin, servetest.Options{Data: filepath.Join(dir, "open"), Tag: tag, Args: []string{"--insecure-no-auth"}})
	locked := startServer(t, corralBin, filepath.Join(dir, "locked"), tag)
	ctx := t.Context()
	// The rebinding name resolves to the service's own address, as the
	// attacker's DNS answers once the page has loaded.
	bctx, stopBrowser, said := startChromium(t, ctx, chromium, tag, chromedp.Flag("host-resolver-rules", "MAP rebind.attacker.test 127.0.0.1"))
	defer stopBrowser()
	b := &tab{t: t, ctx: bctx}

	for _, mode := range []struct {
		name  string
		srv   *servetest.Server
		token string
	}{{"no auth", open, ""}, {"token", locked, token}} {
		t.Run(mode.name, func(t *testing.T) {
			b.t = t
			api := client.New(mode.srv.Addr, mode.token)
			api.HTTP = &http.Client{Timeout: 30 * time.Second}
			defer api.HTTP.CloseIdleConnections()
			if _, err := api.CreateAgent(ctx, &client.Agent{Name: "victim", Kind: corral.KindShell}); err != nil {
				t.Fatal(err)
			}
			target := "http://" + mode.srv.Addr
			if mode.token != "" {
				// The victim is logged in: its session cookie is in the browser.
				b.base = target
				b.open("/login")
				b.do("type the token", chromedp.SendKeys(chromedp.CSS("#token"), token))
				b.submit("log in", "form button[type=submit]")
				b.waitText("h1", "Agents")
			}
			marker := filepath.Join(t.TempDir(), "marker")
			page := strings.NewReplacer("TARGET", target, "MARKER", marker).Replace(attackPage)
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, page)
			}))
			defer evil.Close()
			// localhost and 127.0.0.1 are different sites to the browser.
			b.do("open the attacker's page", chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)))
			b.waitTitle("done")
			t.Logf("the page's fetches: %s", b.eval(`JSON.stringify(window.results)`))

			// DNS rebinding: the attacker's own name now points at the
			// service; its script is same-origin with it.
			_, port, _ := net.SplitHostPort(mode.srv.Addr)
			b.do("open the rebound name", chromedp.Navigate("http://rebind.attacker.test:"+port+"/healthz"))
			for _, js := range []string{
				`fetch("/v1/agents", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({name: "rebound", kind: "shell"})}).then(r => String(r.status))`,
				`fetch("/v1/agents/victim/tasks", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({input: "touch ` + marker + `"})}).then(r => String(r.status))`,
				`fetch("/v1/agents").then(r => String(r.status))`,
			} {
				if got := b.evalAsync(js); got != "421" {
					t.Errorf("a rebound page's %s: %s, want 421", js, got)
				}
			}

			agents, err := api.Agents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(agents) != 1 {
				t.Errorf("the attack created agents: %+v", agents)
			}
			runs, _, err := api.Executions(ctx, client.ListOptions{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 0 {
				t.Errorf("the attack submitted tasks: %s %q", runs[0].ID, runs[0].Input)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the attack ran a command")
			}
		})
	}
	b.t = t
	stopBrowser()
	open.Stop()
	locked.Stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	if t.Failed() {
		t.Logf("corral serve (no auth) said:\n%s\ncorral serve (token) said:\n%s\nChromium said:\n%s", open.Log(), locked.Log(), said())
	}
}

// waitTitle waits until the page's title is want.
func (b *tab) waitTitle(want string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	js := fmt.Sprintf(`document.title === %s`, jsq(want))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(step))); err != nil {
		b.t.Fatalf("waiting for the title %q: %v (title %q)", want, err, b.eval(`document.title`))
	}
}

// evalAsync evaluates js, a promise of a string, and returns what it
// resolves to.
func (b *tab) evalAsync(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}
