package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
)

// TestMCPServiceClaudeDelegatesATask runs the real Claude Code with
// corral mcp --service as its MCP server, against a real corral serve;
// the model (the fake one) calls mcp__corral__submit_task, then
// mcp__corral__wait_execution with the id it got, and answers with the
// result it was given. The delegated task runs on a headless agent of the
// service whose result names its prompt: Claude's answer must be it.
func TestMCPServiceClaudeDelegatesATask(t *testing.T) {
	srv := testutil.FakeModel(t, "delegate", fakemodel.Options{})
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.c.CreateAgent(ctx, &client.Agent{Name: fakemodel.DelegateAgent, Kind: corral.KindHeadless, Command: []string{
		"sh", "-c", `echo '{"type":"result","subtype":"success","result":"delegated answer to '"$1"'","session_id":"s1","num_turns":1,"total_cost_usd":0.25}'`, "agent", "{{prompt}}",
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"corral": map[string]any{
		"command": corralBin, "args": []string{"mcp", "--service", s.addr},
		"env": map[string]string{testutil.TagEnv: tag, "CORRAL_TOKEN": s.token},
	}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a := testutil.Claude(t, srv, "Delegate the task to corral and report its result.", "--mcp-config", cfg)
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--"}, a.Args...)...)
	r := decodeHeadless(t, out)
	want := fakemodel.FinalPrefix + "delegated answer to " + fakemodel.DelegateInput
	if code != 0 || r.Status != "succeeded" || r.Result != want {
		t.Fatalf("exit %d, result %q, want %q\n%+v\n%s", code, r.Result, want, r, errOut)
	}
	var tools []string
	for _, tl := range r.Tools {
		tools = append(tools, tl.Name)
	}
	if strings.Join(tools, ",") != "ToolSearch,mcp__corral__submit_task,mcp__corral__wait_execution" {
		t.Errorf("tools %v", tools)
	}
	// What the model was given as wait_execution's result.
	reqs := srv.Requests()
	var w map[string]any
	if err := json.Unmarshal([]byte(reqs[len(reqs)-1].LastResult()), &w); err != nil {
		t.Fatalf("wait_execution's result: %v", err)
	}
	if w["status"] != "succeeded" || w["finished"] != true || w["cost_usd"] != 0.25 {
		t.Errorf("wait_execution's result %v", w)
	}
	// The task ran on the service, once.
	list, _, err := s.c.Executions(ctx, client.ListOptions{Agent: fakemodel.DelegateAgent})
	if err != nil || len(list) != 1 || list[0].Input != fakemodel.DelegateInput || list[0].Status != corral.StatusSucceeded {
		t.Errorf("the service's executions: %v %+v", err, list)
	}
}
