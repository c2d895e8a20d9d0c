package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/testutil"
)

// stdioServer is a corral mcp process the tests talk to over pipes.
type stdioServer struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	err    error         // its Wait error, once exited
}

// startStdio runs the built corral binary as "corral mcp" and connects the
// SDK's own client to it over pipes of the test's own. Not the SDK's
// CommandTransport: its Close signals a server that stays after stdin's
// EOF, so with it a server that ignores EOF passes. Here nothing signals
// the server until a test has failed: the cleanup closes the client and
// requires the server to exit by itself.
func startStdio(t *testing.T, args ...string) (*mcp.ClientSession, *stdioServer, string) {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	cmd := exec.Command(corralBin, append([]string{"mcp", "--workdir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	cmd.Stderr = os.Stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		t.Fatal(err)
	}
	srv := &stdioServer{cmd: cmd, exited: make(chan struct{})}
	go func() {
		srv.err = cmd.Wait()
		close(srv.exited)
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cmd.Process.Kill()
		<-srv.exited
		inW.Close()
		outR.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		srv.waitExit(t)
		testutil.AssertNoTagged(t, tag, 10*time.Second)
	})
	return cs, srv, tag
}

// waitExit requires the server to exit by itself once its client has
// closed its stdin (a deadline generous for a loaded machine); past it,
// the server is killed and the test fails.
func (s *stdioServer) waitExit(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		if s.err != nil {
			t.Logf("corral mcp exited: %v", s.err)
		}
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("corral mcp did not exit within 15 s of its client closing stdin")
	}
}

// call calls a tool and decodes its structured result into out.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if out != nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
	return res
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type runResult struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	ExitCode         int    `json:"exit_code"`
	TimedOut         bool   `json:"timed_out"`
	Truncated        bool   `json:"truncated"`
	DurationMS       int64  `json:"duration_ms"`
	FullOutputPath   string `json:"full_output_path"`
	SessionRestarted bool   `json:"session_restarted"`
	Cwd              string `json:"cwd"`
	JobID            string `json:"job_id"`
	Denied           bool   `json:"denied"`
	Reason           string `json:"reason"`
	StdoutBytes      int64  `json:"stdout_bytes"`
}

func TestStdioServerListsToolsAndRunsCommands(t *testing.T) {
	cs, _, _ := startStdio(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if len(tl.Description) < 80 || tl.InputSchema == nil {
			t.Errorf("%s: description %q, schema %v", tl.Name, tl.Description, tl.InputSchema)
		}
	}
	slices.Sort(names)
	if want := []string{"environment", "job_kill", "job_output", "list_jobs", "reset_session", "run_command"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "run_command" {
			schema, _ := json.Marshal(tl.InputSchema)
			for _, p := range []string{"command", "timeout_ms", "workdir", "background", "max_output_chars"} {
				if !strings.Contains(string(schema), `"`+p+`"`) {
					t.Errorf("run_command schema lacks %s: %s", p, schema)
				}
			}
			if !strings.Contains(tl.Description, "job_output") || !strings.Contains(tl.Description, "timed_out") {
				t.Errorf("run_command description does not explain jobs and timeouts")
			}
		}
	}

	var r runResult
	res := call(t, cs, "run_command", map[string]any{"command": "cd /; export GREETING=hi; f() { echo fn; }"}, &r)
	if r.ExitCode != 0 || r.Cwd != "/" || res.IsError {
		t.Fatalf("got %+v", r)
	}
	res = call(t, cs, "run_command", map[string]any{"command": "echo $GREETING; pwd; f; exit 4"}, &r)
	if r.Stdout != "hi\n/\nfn\n" || r.ExitCode != 4 {
		t.Fatalf("state not kept: %+v", r)
	}
	// The text content is the structured content's JSON: a model reads the
	// same result whichever its client hands it.
	if sc, _ := json.Marshal(res.StructuredContent); textOf(res) != string(sc) {
		t.Errorf("text content %q, structured content %s", textOf(res), sc)
	}
}

// On stdio the server's own stdin is the protocol stream: a command that
// reads stdin must get end-of-file, not the client's messages.
func TestStdioCommandsCannotReadTheProtocolStream(t *testing.T) {
	cs, _, _ := startStdio(t)
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "cat; echo rc=$?", "timeout_ms": 10000}, &r)
	if r.TimedOut || r.Stdout != "rc=0\n" {
		t.Fatalf("got %+v", r)
	}
	call(t, cs, "run_command", map[string]any{"command": "echo still talking"}, &r)
	if r.Stdout != "still talking\n" {
		t.Fatalf("protocol broken: %+v", r)
	}
}

func TestStdioTimeoutKeepsOutputAndSessionState(t *testing.T) {
	cs, _, _ := startStdio(t)
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "cd /tmp; export KEEP=1"}, &r)
	start := time.Now()
	res := call(t, cs, "run_command", map[string]any{"command": "echo before; sleep 300 & sleep 300", "timeout_ms": 1000}, &r)
	if d := time.Since(start); !r.TimedOut || r.Stdout != "before\n" || d > 5*time.Second {
		t.Fatalf("after %v: %+v", d, r)
	}
	if !strings.Contains(textOf(res), `"timed_out":true`) {
		t.Errorf("text %q", textOf(res))
	}
	for _, cmd := range []string{"exit 3", "set -e; false", "if then", "exec true", "kill -9 $$"} {
		call(t, cs, "run_command", map[string]any{"command": cmd}, &r)
		call(t, cs, "run_command", map[string]any{"command": "pwd; echo $KEEP"}, &r)
		if r.Stdout != "/tmp\n1\n" {
			t.Fatalf("after %q: %+v", cmd, r)
		}
	}
}

func TestStdioBackgroundJobsAreReadKilledAndEndWithTheConnection(t *testing.T) {
	cs, srv, tag := startStdio(t)
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "for i in 1 2 3; do echo tick$i; sleep 0.1; done; sleep 300", "background": true}, &r)
	if r.JobID == "" {
		t.Fatalf("no job id: %+v", r)
	}
	var got strings.Builder
	var o struct {
		Output string `json:"output"`
		Next   int64  `json:"next"`
		Status string `json:"status"`
	}
	testutil.WaitFor(t, 10*time.Second, "three ticks", func() bool {
		call(t, cs, "job_output", map[string]any{"job_id": r.JobID, "wait_ms": 1000}, &o)
		got.WriteString(o.Output)
		return strings.Count(got.String(), "tick") == 3
	})
	if got.String() != "tick1\ntick2\ntick3\n" || o.Status != "running" {
		t.Fatalf("read %q, status %s", got.String(), o.Status)
	}
	var again struct {
		Output string `json:"output"`
	}
	call(t, cs, "job_output", map[string]any{"job_id": r.JobID, "since": 0}, &again)
	if again.Output != got.String() {
		t.Errorf("reread from 0: %q", again.Output)
	}
	var list struct {
		Jobs []struct {
			ID     string `json:"job_id"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	call(t, cs, "list_jobs", nil, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Status != "running" {
		t.Fatalf("jobs %+v", list)
	}
	var info struct {
		Status string `json:"status"`
	}
	call(t, cs, "job_kill", map[string]any{"job_id": r.JobID}, &info)
	if info.Status != "killed" {
		t.Errorf("kill: %+v", info)
	}
	res := call(t, cs, "job_output", map[string]any{"job_id": "job-none"}, nil)
	if !res.IsError || !strings.Contains(textOf(res), "list_jobs") {
		t.Errorf("unknown job: %q", textOf(res))
	}

	// A second job dies with the connection: closing the client closes
	// the server's stdin, and the server leaves by itself, its jobs with
	// it. (Mutation: a ServeStdio that stays after EOF until signalled,
	// build tag mutation_stdineof, fails here.)
	call(t, cs, "run_command", map[string]any{"command": "sleep 300", "background": true}, &r)
	testutil.WaitFor(t, 5*time.Second, "job running", func() bool { return len(testutil.Tagged(tag)) >= 3 })
	cs.Close()
	srv.waitExit(t)
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func TestStdioResetSessionAndEnvironment(t *testing.T) {
	cs, _, _ := startStdio(t)
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "cd /; export X=1"}, &r)
	var env struct {
		ShellFamily  string            `json:"shell_family"`
		ShellVersion string            `json:"shell_version"`
		Cwd          string            `json:"cwd"`
		Tools        map[string]string `json:"tools"`
	}
	call(t, cs, "environment", nil, &env)
	if env.ShellFamily != "bash" || env.ShellVersion == "" || env.Cwd != "/" || env.Tools["git"] == "" {
		t.Errorf("environment %+v", env)
	}
	call(t, cs, "reset_session", nil, nil)
	call(t, cs, "run_command", map[string]any{"command": "echo ${X-unset}; pwd"}, &r)
	if !strings.HasPrefix(r.Stdout, "unset\n") || r.Cwd == "/" {
		t.Errorf("after reset: %+v", r)
	}
}

func TestStdioPolicyDenialIsAToolResultNotAnError(t *testing.T) {
	cs, _, _ := startStdio(t, "--allow", `^ls( |$)`, "--allow", `^echo( |$)`)
	var r runResult
	res := call(t, cs, "run_command", map[string]any{"command": "ls\nrm -rf /"}, &r)
	if !r.Denied || !res.IsError || !strings.Contains(textOf(res), "rm -rf /") {
		t.Fatalf("got %+v %q", r, textOf(res))
	}
	var ok runResult
	call(t, cs, "run_command", map[string]any{"command": "echo ok"}, &ok)
	if ok.Denied || ok.Stdout != "ok\n" {
		t.Fatalf("got %+v", ok)
	}
}

// The peer took 400-800 MB of memory for 200 MB of output.
func TestStdio200MBOfOutputKeepsServerUnder64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: pushes 200 MB through the server (not in -short mode)")
	}
	cs, srv, _ := startStdio(t, "--spill-dir", t.TempDir())
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "head -c 200000000 /dev/zero | tr '\\0' 'a'; echo; echo the end"}, &r)
	if r.StdoutBytes < 200000000 || !r.Truncated || !strings.HasSuffix(r.Stdout, "the end\n") {
		t.Fatalf("got bytes=%d truncated=%v tail=%q", r.StdoutBytes, r.Truncated, r.Stdout[max(0, len(r.Stdout)-20):])
	}
	if fi, err := os.Stat(r.FullOutputPath); err != nil || fi.Size() < 200000000 {
		t.Errorf("full output file: %v", err)
	}
	hwm := testutil.PeakRSS(t, srv.cmd.Process.Pid)
	t.Logf("server peak RSS: %.1f MiB", float64(hwm)/(1<<20))
	if hwm > 64<<20 {
		t.Errorf("server peak RSS %d MiB, want at most 64", hwm>>20)
	}
}
