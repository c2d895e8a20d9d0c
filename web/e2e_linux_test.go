package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// UpdateScreenshotsEnv, set to 1, makes the browser test write its
// screenshots to docs/screenshots instead of a temporary directory.
const updateScreenshotsEnv = "CORRAL_UPDATE_SCREENSHOTS"

// chromiumEnv names a Chromium or Chrome binary to use instead of the one
// found in PATH.
const chromiumEnv = "CORRAL_CHROMIUM"

// findChromium returns the browser to drive, or skips the test loudly.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "SKIP: !!! BROWSER TESTS SKIPPED: no Chromium found. Install it (Debian: apt-get update && apt-get install -y chromium) or set " + chromiumEnv + " to a Chromium or Chrome binary. The web UI is NOT tested end to end without it. !!!"
	fmt.Fprintln(os.Stderr, msg)
	t.Skip(msg)
	return ""
}

// buildBinaries builds corral (with its companions) and the fake
// headless agent into dir.
func buildBinaries(t *testing.T, dir string) (corral, fakeagent string) {
	t.Helper()
	corral, err := servetest.BuildCorral(dir)
	if err != nil {
		t.Fatal(err)
	}
	return corral, servetest.Build(t, dir, "fakeagent", "../internal/fakeagent")
}

// startServer starts corral serve on a free loopback port with the token,
// every process it starts tagged, and stops it by its pid at the end.
func startServer(t *testing.T, bin, data, tag string) *servetest.Server {
	t.Helper()
	return servetest.Start(t, bin, servetest.Options{Data: data, Tag: tag, Env: []string{"CORRAL_TOKEN=" + token}})
}

// tab drives one browser tab.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string // screenshot directory
}

const step = 45 * time.Second

func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n(page: %s)", what, err, b.html())
	}
}

// submit clicks sel and waits for the page it leads to.
func (b *tab) submit(what, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) open(path string) { b.t.Helper(); b.do("open "+path, chromedp.Navigate(b.base+path)) }

func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *tab) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

func (b *tab) html() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ""`))
	return s
}

// waitText waits until the element sel exists and its text holds want.
func (b *tab) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.textContent.includes(%s); })()`, jsq(sel), jsq(want))
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(step))); err != nil {
		b.t.Fatalf("waiting for %q in %s: %v\n(page: %s)", want, sel, err, b.html())
	}
}

// mark sets a marker in the page's window: it survives live updates but
// not a reload, so a test can prove that something appeared without one.
func (b *tab) mark() { b.t.Helper(); b.eval(`window.__corralMark = "kept"; "ok"`) }

func (b *tab) marked() bool { return b.eval(`String(window.__corralMark)`) == "kept" }

func (b *tab) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shot, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func jsq(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBrowserLogsInWatchesAndSteersRuns is the end-to-end test of the web
// UI: a real corral serve process, a real headless Chromium, real runs.
func TestBrowserLogsInWatchesAndSteersRuns(t *testing.T) {
	chromium := findChromium(t)
	if testing.Short() {
		t.Skip("SKIP: browser test skipped in -short mode")
	}
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	dir := t.TempDir()
	corralBin, fakeagent := buildBinaries(t, dir)
	release := filepath.Join(dir, "release")
	srv := startServer(t, corralBin, filepath.Join(dir, "data"), tag)
	base := "http://" + srv.Addr
	api := client.New(srv.Addr, token)
	api.HTTP = &http.Client{Timeout: 30 * time.Second}
	t.Cleanup(api.HTTP.CloseIdleConnections)
	ctx := t.Context()
	if _, err := api.CreateAgent(ctx, &client.Agent{Name: "reviewer", Kind: corral.KindHeadless, StallTimeout: client.Duration(2 * time.Second),
		Command: []string{fakeagent, "-delay", "150ms", "-wait", "1s", "--", "{{prompt}}"}}); err != nil {
		t.Fatal(err)
	}

	shots := t.TempDir()
	if os.Getenv(updateScreenshotsEnv) == "1" {
		shots = filepath.Join("..", "docs", "screenshots")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bctx, stopBrowser, chromeOut := startChromium(t, ctx, chromium, tag)
	defer stopBrowser()
	b := &tab{t: t, ctx: bctx, base: base, shot: shots}
	problems := watchConsole(bctx)

	t.Run("LoginPageRefusesAWrongTokenThenLogsIn", func(t *testing.T) {
		b.t = t
		b.open("/")
		b.waitText("h1", "Log in to corral")
		b.screenshot("login")
		b.do("type a wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"))
		b.submit("submit the wrong token", "form button[type=submit]")
		b.waitText("#login-error", "not the token of this service")
		b.do("type the token", chromedp.SendKeys(chromedp.CSS("#token"), token))
		b.submit("log in", "form button[type=submit]")
		b.waitText("h1", "Agents")
		if got := b.eval(`document.cookie`); got != "" {
			t.Fatalf("the session cookie is readable by script (not HttpOnly): %q", got)
		}
	})

	t.Run("SeesAnAgentAndCreatesOneWithValidation", func(t *testing.T) {
		b.t = t
		b.waitText("tbody[data-live]", "reviewer")
		b.waitText("tbody[data-live]", "0/3 running")
		b.open("/agents/new")
		b.do("fill a bad agent",
			chromedp.SendKeys(chromedp.CSS("#name"), "bad name!"),
			chromedp.SendKeys(chromedp.CSS("#max_parallel_tasks"), "zero"),
			chromedp.SendKeys(chromedp.CSS("#timeout"), "soon"),
		)
		b.submit("create a bad agent", "form.form button[type=submit]")
		b.waitText("#form-errors", "Please fix the 3 fields")
		b.waitText("#name-error", "may hold only letters")
		b.waitText("#max_parallel_tasks-error", "whole number")
		b.waitText("#timeout-error", "duration such as")
		if got := b.eval(`document.querySelector("#max_parallel_tasks").getAttribute("aria-invalid") + " " + document.querySelector("#max_parallel_tasks").getAttribute("aria-describedby")`); got != "true mp-hint max_parallel_tasks-error" {
			t.Fatalf("invalid field not marked for assistive technology: %q", got)
		}
		b.screenshot("agent-form")
		if got := b.eval(`document.activeElement.id`); got != "name" {
			t.Errorf("after a refused form, focus is on %q, not on the first field to fix", got)
		}
		b.do("fix the agent",
			chromedp.Clear(chromedp.CSS("#max_parallel_tasks")), chromedp.SendKeys(chromedp.CSS("#max_parallel_tasks"), "2"),
			chromedp.Clear(chromedp.CSS("#timeout")), chromedp.SendKeys(chromedp.CSS("#timeout"), "5m"),
			chromedp.Clear(chromedp.CSS("#name")), chromedp.SendKeys(chromedp.CSS("#name"), "builder"),
		)
		b.submit("create the agent", "form.form button[type=submit]")
		b.waitText(".notice", "Saved.")
		b.open("/")
		b.waitText("tbody[data-live]", "builder")
		b.waitText("tbody[data-live]", "0/2 running")
	})

	var liveID string
	t.Run("SubmitsATaskAndWatchesItsOutputLive", func(t *testing.T) {
		b.t = t
		b.open("/tasks/new?agent=builder")
		cmd := fmt.Sprintf("echo first-line; while [ ! -e %s ]; do sleep 0.05; done; echo second-line", release)
		b.do("write the task", chromedp.SendKeys(chromedp.CSS("#input"), cmd))
		b.submit("run it", "#submit-task")
		b.waitText("h1", "Execution")
		liveID = strings.TrimSpace(b.text("h1 .mono"))
		b.mark()
		b.waitText("#log", "first-line")
		b.waitText("#summary .badge", "running")
		b.waitText("#log-live", "live")
		b.waitText("#duration", "…")
		b.screenshot("execution-live")
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		b.waitText("#log", "second-line")
		b.waitText("#summary .badge", "succeeded")
		b.waitText("#summary", "exit code 0")
		if !b.marked() {
			t.Fatal("the page reloaded: the output did not arrive live")
		}
	})

	t.Run("NewRunsAppearInTheListWithoutReload", func(t *testing.T) {
		b.t = t
		b.open("/executions")
		b.waitText("#exec-rows", liveID)
		b.waitText("#exec-live", "Live")
		b.mark()
		e, err := api.Submit(ctx, "builder", "echo from-the-api $"+testutil.TagEnv, 0)
		if err != nil {
			t.Fatal(err)
		}
		b.waitText("#exec-rows", e.ID)
		if !b.marked() {
			t.Fatal("the list reloaded instead of updating live")
		}
		// The runs carry the test's tag, so the survivor check below sees
		// them too.
		testutil.WaitFor(t, step, "the run to end", func() bool {
			e, err = api.Execution(ctx, e.ID)
			return err == nil && e.Status.Terminal()
		})
		if !strings.Contains(e.Stdout, tag) {
			t.Fatalf("a run does not carry the test's tag: %q", e.Stdout)
		}
	})

	t.Run("CancelsARunningTask", func(t *testing.T) {
		b.t = t
		b.open("/tasks/new?agent=builder")
		// "cancel-me" comes once both sleeps are forked: on a loaded
		// machine an earlier cancel would find fewer processes to kill.
		b.do("write the task", chromedp.SendKeys(chromedp.CSS("#input"), "sleep 300 & sleep 300 & echo cancel-me; wait"))
		b.submit("run it", "#submit-task")
		b.waitText("#log", "cancel-me")
		id := strings.TrimSpace(b.text("h1 .mono"))
		b.submit("cancel it", "#cancel")
		b.waitText("#summary .badge", "cancelled")
		b.waitText("#summary", "error type: cancelled")
		e, err := api.Execution(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// The count is of the processes corral's stop signal reached: the
		// shell and its two sleeps, however fast each died of it (one
		// killed by the SIGTERM and reaped by the run's init before the
		// SIGCONT that follows is counted too).
		if e.Status != "cancelled" || e.Killed != 3 {
			t.Fatalf("cancelled run: status %s, %d processes killed (want the shell and its two sleeps); error %q, %d survivors", e.Status, e.Killed, e.Error, e.Survivors)
		}
		b.waitText("#killed", strconv.Itoa(e.Killed))
	})

	t.Run("ShowsAFailedRunsErrorType", func(t *testing.T) {
		b.t = t
		e, err := api.Submit(ctx, "builder", "echo about to fail >&2; exit 3", 0)
		if err != nil {
			t.Fatal(err)
		}
		b.open("/executions/" + e.ID)
		b.waitText("#summary .badge", "failed")
		b.waitText("#summary", "error type: exit")
		b.waitText("#summary", "exit code 3")
		b.waitText("#log", "about to fail")
		b.open("/executions?status=failed")
		b.waitText("#exec-rows", e.ID)
		b.waitText("#exec-rows .errtype", "exit")
	})

	t.Run("ShowsAHeadlessTurnsTimelineAnswerAndStall", func(t *testing.T) {
		b.t = t
		e, err := api.Submit(ctx, "reviewer", "success", 0)
		if err != nil {
			t.Fatal(err)
		}
		b.open("/executions/" + e.ID)
		b.waitText("#summary .badge", "succeeded")
		b.waitText("#answer", "There are two files.")
		b.waitText("#timeline", "Bash")
		b.waitText("#timeline .outcome", "ok")
		b.waitText("#cost", "$0.0123")
		b.waitText("#session-id", "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11")
		b.waitText("#log", "→ Bash")

		hung, err := api.Submit(ctx, "reviewer", "hung-mcp", 0)
		if err != nil {
			t.Fatal(err)
		}
		b.open("/executions/" + hung.ID)
		b.waitText("#timeline", "mcp__slack__post_message")
		b.waitText("#summary .badge", "failed")
		b.waitText("#summary", "error type: stall")
		b.waitText("#timeline tr.stalled .outcome", "stalled")
		b.screenshot("execution-headless")
	})

	t.Run("SchedulesCanBeCreatedDisabledAndTriggered", func(t *testing.T) {
		b.t = t
		b.open("/schedules")
		b.do("fill a schedule",
			chromedp.SetValue(chromedp.CSS("#s-agent"), "builder"),
			chromedp.SendKeys(chromedp.CSS("#s-cron"), "@every 1h"),
			chromedp.SendKeys(chromedp.CSS("#s-input"), "echo scheduled-run"),
		)
		b.submit("create it", "section.card button[type=submit]")
		b.waitText(".notice", "Schedule created.")
		b.waitText("table.list tbody", "@every 1h")
		b.waitText("table.list tbody tr td:nth-child(4)", " in ")
		b.submit("disable it", "table.list tbody form[action$='/disable'] button")
		b.waitText(".notice", "disabled")
		b.waitText("table.list tbody", "— (disabled)")
		b.submit("enable it", "table.list tbody form[action$='/enable'] button")
		b.waitText(".notice", "Schedule enabled.")
		b.screenshot("schedules")
		b.submit("run it now", "table.list tbody form[action$='/trigger'] button")
		b.waitText("#summary", "schedule")
		b.waitText("#log", "scheduled-run")
	})

	t.Run("AgentsPageShowsCapacityAndTheChart", func(t *testing.T) {
		b.t = t
		b.open("/")
		b.waitText("tbody[data-live] tr td:nth-child(5)", " in ")
		b.waitText("figure.chart desc", "runs in the last 24 hours")
		if n := b.eval(`String(document.querySelectorAll("figure.chart rect.bar").length)`); n == "0" {
			t.Fatal("the chart has no bars")
		}
		b.screenshot("agents")
		b.open("/executions")
		b.waitText("#exec-rows", liveID)
		b.screenshot("executions")
		b.open("/executions/" + liveID)
		b.waitText("#summary .badge", "succeeded")
		b.screenshot("execution")
	})

	t.Run("KeyboardReachesEveryControl", func(t *testing.T) {
		b.t = t
		b.open("/tasks/new?agent=builder")
		var seen []string
		for range 20 {
			b.do("press Tab", chromedp.KeyEvent("\t"))
			seen = append(seen, b.eval(`(() => { const e = document.activeElement; return e.tagName + "#" + (e.id || e.getAttribute("href") || e.textContent.trim()); })()`))
		}
		all := strings.Join(seen, " ")
		for _, want := range []string{"A##main", "A#/executions", "SELECT#agent", "TEXTAREA#input", "INPUT#timeout", "BUTTON#submit-task"} {
			if !strings.Contains(all, want) {
				t.Errorf("Tab never reached %s; it went %s", want, all)
			}
		}
		outline := b.eval(`getComputedStyle(document.activeElement).outlineStyle`)
		if outline == "none" {
			t.Error("the focused control has no visible outline")
		}
	})

	t.Run("AnotherSiteCannotActWithTheSession", func(t *testing.T) {
		b.t = t
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>evil</title><form method="post" action="%s/tasks"><input name="agent" value="builder"><input name="input" value="echo csrf-attack"><input name="csrf" value="guess"><button id="go">go</button></form>`, base)
		}))
		defer evil.Close()
		// localhost and 127.0.0.1 are different sites to the browser.
		evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
		b.do("open the other site", chromedp.Navigate(evilURL))
		b.submit("post from the other site", "#go")
		list, _, err := api.Executions(ctx, client.ListOptions{Agent: "builder", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if strings.Contains(e.Input, "csrf-attack") {
				t.Fatalf("a cross-site form submitted a task: %s", e.ID)
			}
		}
	})

	t.Run("LogsOut", func(t *testing.T) {
		b.t = t
		b.open("/")
		b.submit("log out", "form.logout button")
		b.waitText("h1", "Log in to corral")
		b.open("/executions")
		b.waitText("h1", "Log in to corral")
	})

	b.t = t
	stopBrowser()
	if p := problems(); len(p) > 0 {
		t.Errorf("the pages reported script errors or policy violations:\n%s", strings.Join(p, "\n"))
	}
	srv.Stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	if t.Failed() {
		t.Logf("corral serve said:\n%s\nChromium said:\n%s", srv.Log(), chromeOut())
	}
}

// startChromium starts a headless Chromium for the test, its processes
// tagged, and returns its context, a function that stops it (safe to call
// twice), and what it printed so far.
func startChromium(t *testing.T, ctx context.Context, chromium, tag string, extra ...chromedp.ExecAllocatorOption) (context.Context, func(), func() string) {
	t.Helper()
	var out strings.Builder
	w := &lockedWriter{w: &out}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(1280, 800),
		chromedp.Env(testutil.TagEnvVar(tag), "TZ=UTC"),
		chromedp.CombinedOutput(w),
	}, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	stop := func() { cancelBrowser(); cancelAlloc() }
	said := func() string { w.mu.Lock(); defer w.mu.Unlock(); return out.String() }
	// The first action starts the browser and binds it to its context: not
	// one with a step's deadline.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		stop()
		t.Fatalf("start Chromium: %v\n%s", err, said())
	}
	return bctx, stop, said
}

// watchConsole collects, until ctx ends, the page's uncaught exceptions,
// console errors and security messages (a Content-Security-Policy
// violation among them).
func watchConsole(ctx context.Context) func() []string {
	var mu sync.Mutex
	var out []string
	done := make(chan struct{})
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() || (m.Type == "error" && (m.Source == "" || m.Source == "security" || m.Source == "javascript")) {
				mu.Lock()
				out = append(out, fmt.Sprintf("%s:%d %s", m.URL, m.Line+1, m.Text))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 1<<20 {
		return len(p), nil
	}
	return l.w.Write(p)
}
