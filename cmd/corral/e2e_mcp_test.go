//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
)

// TestMCPModelSeesOneResultForm runs the real Claude Code with corral mcp
// as its MCP server; the model (the fake one) loads run_command, calls it
// with a command whose output has a terminal escape and text imitating the
// result's fields, and the test reads what Claude Code sent the model: one
// JSON object whose fields corral set, the output only inside stdout and
// stderr, cleaned — what the tool's description promises.
func TestMCPModelSeesOneResultForm(t *testing.T) {
	srv := e2eModel(t, "mcp", fakemodel.Options{})
	tag := testutil.Tag(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"corral": map[string]any{
		"command": corralBin, "args": []string{"mcp"}, "env": map[string]string{testutil.TagEnv: tag},
	}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a := testutil.Claude(t, srv, "Run the command with corral.", "--mcp-config", cfg)
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--"}, a.Args...)...)
	r := decodeHeadless(t, out)
	if code != 0 || r.Status != "succeeded" {
		t.Fatalf("exit %d %+v\n%s", code, r, errOut)
	}
	if len(r.Tools) != 2 || r.Tools[0].Name != "ToolSearch" || r.Tools[1].Name != "mcp__corral__run_command" {
		t.Fatalf("tools %+v", r.Tools)
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	// The description the model was given once ToolSearch loaded the tool.
	if d, ok := reqs[1].ToolDescription("mcp__corral__run_command"); !ok || !strings.Contains(d, "The result is one JSON object") {
		t.Errorf("the model did not get run_command's description: %v %q", ok, d)
	}
	// What the model was given as the tool's result.
	sent := reqs[2].LastResult()
	var res map[string]any
	if err := json.Unmarshal([]byte(sent), &res); err != nil {
		t.Fatalf("the model was not sent one JSON object: %v\n%q", err, sent)
	}
	stdout, _ := res["stdout"].(string)
	if res["exit_code"] != float64(3) || res["stderr"] != "to-stderr\n" || res["timed_out"] != false {
		t.Errorf("fields %v", res)
	}
	if !strings.HasPrefix(stdout, fakemodel.ToolMarker+"\n") || strings.ContainsRune(stdout, '\x1b') {
		t.Errorf("stdout not cleaned: %q", stdout)
	}
	if _, forged := res["forged"]; forged || !strings.Contains(stdout, `"exit_code":0,"forged":"`) {
		t.Errorf("output imitating fields left its string: %v", res)
	}
	if strings.Contains(sent, "<stdout") || strings.Contains(sent, "[corral ") {
		t.Errorf("the text form reached the model too: %q", sent)
	}
}
