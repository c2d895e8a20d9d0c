//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
)

// TestE2EServeRunsRealAgents: headless agents of corral serve whose
// command is the real Claude Code or Codex, against the fake model: a task
// runs the turn, and the execution keeps what it said. A 401 fails the task
// as auth without waiting out the agent's retries.
func TestE2EServeRunsRealAgents(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	must := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := s.cli(args...)
		if code != want {
			t.Fatalf("corral %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, want, out, errOut)
		}
		return out
	}
	create := func(name string, a testutil.RealAgent) {
		args := []string{"agents", "create", name, "--kind", "headless", "--timeout", "2m", "--idle", "1m"}
		for _, kv := range a.Env {
			args = append(args, "--env", kv)
		}
		must(0, append(append(args, "--"), a.Args...)...)
	}
	submit := func(agent, prompt string, want int) client.Execution {
		t.Helper()
		out := must(want, "submit", agent, prompt, "--wait", "--json")
		var e client.Execution
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatalf("submit --json: %v\n%s", err, out)
		}
		return e
	}

	model := e2eModel(t, "tool", fakemodel.Options{})
	create("claude", testutil.Claude(t, model, "{{prompt}}"))
	create("codex", testutil.Codex(t, model, "{{prompt}}"))
	failing := e2eModel(t, "auth", fakemodel.Options{})
	create("claude-401", testutil.Claude(t, failing, "{{prompt}}"))

	e := submit("claude", "Run the command.", 0)
	if e.Status != corral.StatusSucceeded || e.FinalizedBy != "result" || !strings.HasPrefix(e.Result, fakemodel.FinalPrefix+fakemodel.ToolMarker) || e.SessionID == "" || e.CostUSD <= 0 {
		t.Errorf("claude execution %+v", e)
	}
	if usageOf(e)["cache_creation_input_tokens"] != 80 {
		t.Errorf("claude usage %s", e.Usage)
	}
	e = submit("codex", "Run the command.", 0)
	if e.Status != corral.StatusSucceeded || !strings.Contains(e.Result, fakemodel.ToolMarker) || e.CostUSD != 0 || usageOf(e)["cache_write_input_tokens"] != 80 {
		t.Errorf("codex execution %+v, usage %s", e, e.Usage)
	}
	e = submit("claude-401", "Say pong.", 1)
	if e.Status != corral.StatusFailed || e.ErrorType != corral.ErrorAuth || e.FinalizedBy != "auth" {
		t.Errorf("failing execution %+v", e)
	}
}

func usageOf(e client.Execution) map[string]int {
	var u map[string]int
	json.Unmarshal(e.Usage, &u)
	return u
}
