package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/testutil"
)

// serviceMCP starts corral mcp --service over stdio with env, files as
// descriptors 3 and up, and args, and connects the SDK's client to it.
func serviceMCP(t *testing.T, env []string, files []*os.File, args ...string) (*mcp.ClientSession, int) {
	t.Helper()
	cmd := exec.Command(corralBin, append([]string{"mcp"}, args...)...)
	cmd.Env, cmd.ExtraFiles, cmd.Stderr = env, files, os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

// listAgents calls list_agents and returns its text and whether it failed.
func listAgents(t *testing.T, cs *mcp.ClientSession) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// corral mcp --service finds the service's token as the client commands
// do, never on its command line, and keeps it out of its environment.
func TestMCPServiceFindsTheTokenAsTheCLIDoes(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	if _, errOut, code := s.cli("agents", "create", "sh", "--kind", "shell"); code != 0 {
		t.Fatal(errOut)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name  string
		env   []string
		files func() []*os.File
		args  []string
		ok    bool
	}{
		{name: "env", env: []string{"CORRAL_TOKEN=" + s.token, "CORRAL_DATA=" + empty}, ok: true},
		{name: "data", env: []string{"CORRAL_DATA=" + empty}, args: []string{"--data", s.data}, ok: true},
		{name: "CORRAL_DATA", env: []string{"CORRAL_DATA=" + s.data}, ok: true},
		{name: "file", env: []string{"CORRAL_DATA=" + empty}, args: []string{"--service-token-file", "/dev/fd/3"}, ok: true, files: func() []*os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(w, s.token)
			w.Close()
			t.Cleanup(func() { r.Close() })
			return []*os.File{r}
		}},
		{name: "none", env: []string{"CORRAL_DATA=" + empty}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var files []*os.File
			if tc.files != nil {
				files = tc.files()
			}
			cs, pid := serviceMCP(t, serveEnv(tag, tc.env...), files, append([]string{"--service", s.addr}, tc.args...)...)
			text, failed := listAgents(t, cs)
			if failed == tc.ok || (tc.ok && !strings.Contains(text, `"name":"sh"`)) || (!tc.ok && !strings.Contains(strings.ToLower(text), "token")) {
				t.Fatalf("list_agents: failed %v: %s", failed, text)
			}
			for _, f := range []string{"environ", "cmdline"} {
				if b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), f)); err != nil || strings.Contains(string(b), s.token) {
					t.Errorf("/proc/%d/%s holds the token (%v)", pid, f, err)
				}
			}
		})
	}
}

func TestMCPServiceRefusesTheShellToolsFlags(t *testing.T) {
	cmd := exec.Command(corralBin, "mcp", "--service", "127.0.0.1:1", "--workdir", t.TempDir(), "--deny", "x")
	cmd.Env = serveEnv(testutil.Tag(t))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--deny, --workdir configure the shell tool") {
		t.Fatalf("%v: %s", err, out)
	}
}
