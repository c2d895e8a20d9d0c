package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
)

// TestAgentFormNeverShowsEnvValues: the edit page names the variables
// set, never their values; a value can be replaced and a variable
// removed, and what is left alone keeps its value.
func TestAgentFormNeverShowsEnvValues(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "k", Kind: corral.KindShell, Env: map[string]string{"API_KEY": "sk-kept-secret", "OLD": "old-value", "ROTATE": "rotate-me"}}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	csrf := b.login()
	page := b.get("/agents/k")
	for _, v := range []string{"sk-kept-secret", "old-value", "rotate-me"} {
		if strings.Contains(page.body, v) {
			t.Fatalf("the edit page shows the value %q", v)
		}
	}
	for _, name := range []string{"API_KEY", "OLD", "ROTATE"} {
		if !regexp.MustCompile(`<code>` + name + `</code> <span class="tag">set</span>`).MatchString(page.body) {
			t.Errorf("the edit page does not say %s is set", name)
		}
	}
	r := b.post("/agents/k", url.Values{"csrf": {csrf}, "kind": {"shell"}, "env": {"ROTATE=rotated\nNEW=1"}, "env_remove": {"OLD"}})
	if r.code != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", r.code, r.body)
	}
	a, _ := s.svc.Agent(ctx, "k")
	if a.Env["API_KEY"] != "sk-kept-secret" || a.Env["ROTATE"] != "rotated" || a.Env["NEW"] != "1" || len(a.Env) != 3 {
		t.Fatalf("env after the edit: %v", a.Env)
	}
}

// TestAgentFormKeepsWhoRunsItAndItsSandbox: run_as, pass_env and the
// sandbox go through the form, and a bad sandbox is named at its field.
func TestAgentFormKeepsWhoRunsItAndItsSandbox(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	csrf := b.login()
	form := url.Values{"csrf": {csrf}, "name": {"boxed"}, "kind": {"shell"}, "run_as": {"nobody"}, "pass_env": {"LANG\nANTHROPIC_API_KEY"},
		"sandbox": {"workspace"}, "network": {"none"}, "writable": {"relative/path"}}
	r := b.post("/agents", form)
	if r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="sandbox-error"`) || !strings.Contains(r.body, "not absolute") {
		t.Fatalf("a relative writable path: %d\n%s", r.code, r.body)
	}
	form.Set("writable", "/srv/cache")
	form.Set("allow_hosts", "api.anthropic.com:443")
	if r := b.post("/agents", form); r.code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", r.code, r.body)
	}
	a, _ := s.svc.Agent(t.Context(), "boxed")
	want := corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{"/srv/cache"}, AllowHosts: []string{"api.anthropic.com:443"}}
	if a.RunAs != "nobody" || strings.Join(a.PassEnv, ",") != "ANTHROPIC_API_KEY,LANG" || a.Sandbox.Mode != want.Mode || a.Sandbox.Writable[0] != "/srv/cache" || a.Sandbox.AllowHosts[0] != want.AllowHosts[0] {
		t.Fatalf("stored: run_as %q pass_env %v sandbox %+v", a.RunAs, a.PassEnv, a.Sandbox)
	}
	page := b.get("/agents/boxed").body
	for _, want := range []string{`value="nobody"`, "ANTHROPIC_API_KEY\nLANG", `<option value="workspace" selected>`, "/srv/cache", "api.anthropic.com:443"} {
		if !strings.Contains(page, want) {
			t.Errorf("the edit page lacks %q", want)
		}
	}
	form.Set("name", "leaky")
	form.Set("pass_env", "CORRAL_TOKEN")
	if r := b.post("/agents", form); r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="pass_env-error"`) {
		t.Fatalf("pass_env CORRAL_TOKEN: %d", r.code)
	}
}

// TestExecutionPageShowsTheSandboxAndTheUser: a sandboxed agent's run
// says what confined it (or, while no sandbox can be built here, that it
// did not start and why); every run says who it ran as.
func TestExecutionPageShowsTheSandboxAndTheUser(t *testing.T) {
	s := newStack(t, stackOpt{token: token, started: true})
	ctx := t.Context()
	for _, a := range []*corral.Agent{{Name: "plain", Kind: corral.KindShell}, {Name: "boxed", Kind: corral.KindShell, Workdir: t.TempDir(), Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}}} {
		if _, err := s.svc.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	b := s.browser()
	b.login()
	for _, agent := range []string{"plain", "boxed"} {
		e, err := s.svc.Submit(ctx, service.Task{Agent: agent, Input: "echo hi"})
		if err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 30*time.Second, "the run to end", func() bool {
			e, err = s.svc.Execution(ctx, e.ID)
			return err == nil && e.Status.Terminal()
		})
		page := b.get("/executions/" + e.ID).body
		if e.User == "" || !strings.Contains(page, `<dd id="run-user">`+e.User+`</dd>`) {
			t.Errorf("%s: the page does not say who it ran as (%q)", agent, e.User)
		}
		switch {
		case agent == "plain":
			if !strings.Contains(page, `<dd id="sandbox">off</dd>`) {
				t.Errorf("plain run: sandbox not shown as off")
			}
		case e.Sandbox != nil:
			if !strings.Contains(page, `<dd id="sandbox">workspace, network none`) {
				t.Errorf("sandboxed run: the page does not say what held it")
			}
		default:
			if e.ErrorType != corral.ErrorStart || !strings.Contains(page, "cannot be built on this worker") || !strings.Contains(page, "workspace, network none <span class=\"sub\">(the agent's setting)</span>") {
				t.Errorf("sandboxed run without a sandbox: %s %q; the page does not say why:\n%s", e.ErrorType, e.Error, page)
			}
		}
	}
}

// TestInternalErrorsShowAnIDNotTheirCause: what failed inside stays in the
// log.
func TestInternalErrorsShowAnIDNotTheirCause(t *testing.T) {
	s := newStack(t, stackOpt{}) // without a token: no session lookup fails first
	b := s.browser()
	s.st.Close()
	r := b.get("/executions")
	if r.code != http.StatusInternalServerError || !regexp.MustCompile(`internal error \(id [0-9a-f]{12}\)`).MatchString(r.body) || strings.Contains(r.body, "closed") || strings.Contains(r.body, "sql") {
		t.Fatalf("internal error page: %d\n%s", r.code, r.body)
	}
}
