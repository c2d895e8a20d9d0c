package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// These tests drive corral mcp with the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, through testdata/conformance/client.mjs) and
// the MCP Inspector CLI, as .ci/run installs them (pinned). They skip,
// saying so, where Node.js or the packages are missing.

// node runs client.mjs in mode against url (stdio when empty), with the
// server's commands tagged and its temporary files in tmp.
func node(t *testing.T, tag, tmp, mode, url string) string {
	t.Helper()
	npm := testutil.NPMDir(t)
	script, err := filepath.Abs("testdata/conformance/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{script, mode}
	if url != "" {
		args = append(args, url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "CORRAL_NPM_DIR="+npm, "CORRAL_BIN="+corralBin, "CORRAL_WORKDIR="+t.TempDir(), testutil.TagEnvVar(tag), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs %s: %v\n%s", mode, err, out)
	}
	t.Logf("%s: %s", mode, strings.TrimSpace(string(out)))
	return string(out)
}

// noneLeft checks that a stdio server started by node is gone, with its
// commands and temporary files.
func noneLeft(t *testing.T, tag, tmp string) {
	t.Helper()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("files left in TMPDIR: %v", left)
	}
}

func TestConformanceTypeScriptSDKOverStdio(t *testing.T) {
	for _, mode := range []string{"versions", "malformed", "cancel", "shutdown"} {
		t.Run(mode, func(t *testing.T) {
			tag, tmp := testutil.Tag(t), t.TempDir()
			out := node(t, tag, tmp, mode, "")
			if !strings.HasPrefix(out, "ok "+mode) {
				t.Errorf("output %q", out)
			}
			noneLeft(t, tag, tmp)
		})
	}
}

// A message past the 8 MiB limit was answered with a null id, and the
// TypeScript SDK's client waited for its own 60 s timeout.
func TestConformanceTypeScriptSDKOversizedCallFailsAtOnce(t *testing.T) {
	tag, tmp := testutil.Tag(t), t.TempDir()
	out := node(t, tag, tmp, "oversized", "")
	var ms int
	if _, err := fmt.Sscanf(out, "ok oversized %d", &ms); err != nil {
		t.Fatalf("output %q", out)
	}
	// Well under the client's 60 s timeout, however loaded the machine.
	if ms > 5000 {
		t.Errorf("the oversized call failed after %d ms", ms)
	}
	noneLeft(t, tag, tmp)
}

func TestConformanceTypeScriptSDKOverHTTP(t *testing.T) {
	testutil.NPMDir(t)
	_, hs, tag := httpServer(t, HTTPOptions{ClientIdle: 500 * time.Millisecond})
	for _, mode := range []string{"versions", "origin", "vanish"} {
		t.Run(mode, func(t *testing.T) {
			out := node(t, tag, t.TempDir(), mode, hs.URL+"/mcp")
			if !strings.HasPrefix(out, "ok "+mode) {
				t.Errorf("output %q", out)
			}
			// Whatever the client left (its vanish leaves a job) ends
			// with its session.
			testutil.AssertNoTagged(t, tag, 10*time.Second)
		})
	}
}

// inspector runs the Inspector CLI against target with args and decodes
// its JSON answer.
func inspector(t *testing.T, env []string, out any, target []string, args ...string) {
	t.Helper()
	bin := testutil.NPMBin(t, "mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"--cli"}, target...), args...)...)
	cmd.Env = append(os.Environ(), append(env, "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))...)
	cmd.Dir = t.TempDir()
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-inspector %v: %v\n%s", args, err, b)
	}
	// The JSON answer may be followed by notes on the schemas.
	if i := strings.LastIndex(string(b), "\n}"); i >= 0 {
		b = b[:i+2]
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("mcp-inspector %v: %v\n%s", args, err, b)
	}
}

func TestConformanceInspectorCLI(t *testing.T) {
	tag, tmp := testutil.Tag(t), t.TempDir()
	env := []string{testutil.TagEnvVar(tag), "TMPDIR=" + tmp}
	stdio := []string{corralBin, "mcp", "--workdir", t.TempDir()}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	inspector(t, env, &list, stdio, "--method", "tools/list", "--strict")
	if len(list.Tools) != 6 {
		t.Fatalf("tools: %+v", list)
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Stdout   string `json:"stdout"`
			ExitCode int    `json:"exit_code"`
		} `json:"structuredContent"`
	}
	inspector(t, env, &res, stdio, "--method", "tools/call", "--tool-name", "run_command", "--tool-arg", "command=echo hi from the inspector")
	if res.IsError || res.StructuredContent.Stdout != "hi from the inspector\n" {
		t.Errorf("stdio call: %+v", res)
	}
	noneLeft(t, tag, tmp)

	_, hs, _ := httpServer(t, HTTPOptions{ClientIdle: 500 * time.Millisecond})
	inspector(t, nil, &res, []string{hs.URL + "/mcp"}, "--method", "tools/call", "--tool-name", "run_command", "--tool-arg", "command=echo over http")
	if res.IsError || res.StructuredContent.Stdout != "over http\n" {
		t.Errorf("HTTP call: %+v", res)
	}
}
