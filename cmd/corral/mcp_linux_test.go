package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/testutil"
)

// mcpServer is a corral mcp --http started by a test.
type mcpServer struct {
	cmd *exec.Cmd
	url string
	log *strings.Builder
}

// startMCP starts corral mcp --http on a loopback port with env (added to
// the test's), files as descriptors 3 and up, and args, and waits for it
// to serve. It is stopped (SIGKILL) at the end of the test if still alive.
func startMCP(t *testing.T, env []string, files []*os.File, args ...string) *mcpServer {
	t.Helper()
	cmd := exec.Command(corralBin, append([]string{"mcp", "--http", "127.0.0.1:0", "--workdir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = files
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &mcpServer{cmd: cmd, log: &strings.Builder{}}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.log.WriteString(line + "\n") // read only once found or closed
			if _, rest, ok := strings.Cut(line, "serving streamable HTTP at "); ok {
				found <- rest
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			cmd.Wait()
			t.Fatalf("corral mcp did not serve:\n%s", s.log)
		}
		s.url = u
	case <-time.After(30 * time.Second):
		t.Fatal("corral mcp did not serve within 30 s")
	}
	return s
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP client session with the server, with token.
func (s *mcpServer) connect(t *testing.T, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
}

// run runs command in the session and returns its stdout.
func run(t *testing.T, cs *mcp.ClientSession, command string, background bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": command, "background": background}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Stdout string `json:"stdout"`
		JobID  string `json:"job_id"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if res.IsError {
		t.Fatalf("%s: %s", command, b)
	}
	if background {
		return out.JobID
	}
	return out.Stdout
}

// CORRAL_MCP_TOKEN was in the environment of every command corral mcp
// ran, and --token in its command line, which every local user can read.
// However the token is given, no command finds it: not in its
// environment, not in the server's /proc/PID/environ or cmdline (its
// parent's or the server's own pid), not in a descriptor it inherited.
func TestMCPTokenReachesNoCommand(t *testing.T) {
	token := "tok-" + hex.EncodeToString([]byte(testutil.Tag(t)))
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(w, token)
		w.Close()
		t.Cleanup(func() { r.Close() })
		return r
	}
	for name, c := range map[string]struct {
		env   []string
		files func() []*os.File
		args  []string
	}{
		"env":          {env: []string{"CORRAL_MCP_TOKEN=" + token}},
		"file":         {args: []string{"--token-file", file}},
		"descriptor":   {files: func() []*os.File { return []*os.File{pipe()} }, args: []string{"--token-file", "/dev/fd/3"}},
		"deprecated":   {args: []string{"--token", token}},
		"deprecatedEq": {args: []string{"--token=" + token}},
	} {
		t.Run(name, func(t *testing.T) {
			var files []*os.File
			if c.files != nil {
				files = c.files()
			}
			s := startMCP(t, c.env, files, c.args...)
			if _, err := s.connect(t, "wrong"); err == nil {
				t.Fatal("a client with the wrong token was let in")
			}
			cs, err := s.connect(t, token)
			if err != nil {
				t.Fatalf("the token did not reach the server: %v\n%s", err, s.log)
			}
			defer cs.Close()
			pid := s.cmd.Process.Pid
			// Hex, so that nothing on the way (a redactor) can hide it.
			got := run(t, cs, fmt.Sprintf(`{ env; cat /proc/$PPID/environ /proc/$PPID/cmdline /proc/%d/environ /proc/%d/cmdline; for f in /proc/$$/fd/*; do [ -f "$f" ] && cat "$f"; done; } 2>&1 | od -An -v -tx1 | tr -d ' \n'`, pid, pid), false)
			if len(got) < 1000 {
				t.Fatalf("the command read too little to judge: %q", got)
			}
			if strings.Contains(got, hex.EncodeToString([]byte(token))) {
				t.Errorf("a command read the token")
			}
			// The descriptor the token came through is closed: neither
			// the server nor its commands hold it.
			for _, f := range files {
				var st syscall.Stat_t
				syscall.Fstat(int(f.Fd()), &st)
				pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
				fds := run(t, cs, fmt.Sprintf(`for f in /proc/$$/fd/* /proc/%d/fd/*; do readlink "$f"; done`, pid), false)
				if strings.Contains(fds, pipe) || !strings.Contains(fds, "pipe:[") {
					t.Errorf("the token's descriptor %s is still open: %s", pipe, fds)
				}
			}
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); strings.Contains(string(b), token) {
				t.Errorf("the server's environment block holds the token")
			}
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), token) {
				t.Errorf("the server's command line holds the token")
			}
			if strings.HasPrefix(name, "deprecated") && !strings.Contains(s.log.String(), "deprecated") {
				t.Errorf("--token did not say it is deprecated:\n%s", s.log)
			}
		})
	}
}

// A token file others may read is refused, saying why.
func TestMCPRefusesATokenFileOthersCanRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("x\n"), 0o644)
	out, err := exec.Command(corralBin, "mcp", "--http", "127.0.0.1:0", "--token-file", file).CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != exitCorralFailed || !strings.Contains(string(out), "chmod 600") {
		t.Errorf("err %v, output %q", err, out)
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// stateOf lists the state directories (session snapshots, outputs and job
// logs) in dir that name pid as their owner.
func stateOf(dir string, pid int) []string {
	var out []string
	for _, p := range []string{"corral-session-", "corral-shell-"} {
		m, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s*.%d.*", p, pid)))
		out = append(out, m...)
	}
	return out
}

// memTempDir returns a temporary directory on a memory file system, where
// corral keeps sessions' state when XDG_RUNTIME_DIR names one, or skips.
func memTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "corral-test-")
	if err != nil {
		t.Skipf("SKIP: no writable /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// After corral mcp was SIGKILLed, its sessions' state (their variables,
// exported secrets included) and its job logs stayed forever, and no later
// start removed them. The next start removes a dead server's state, and
// leaves a live one's alone; a server that ends removes its own.
func TestMCPKilledLeavesNoStateAfterTheNextStart(t *testing.T) {
	tmp := memTempDir(t)
	env := []string{"TMPDIR=" + tmp, "XDG_RUNTIME_DIR=" + tmp}
	withJob := func(s *mcpServer) {
		cs, err := s.connect(t, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		run(t, cs, "export SECRET=s3cret", false)
		run(t, cs, "echo job output; sleep 300", true)
	}
	dead := startMCP(t, env, nil)
	withJob(dead)
	live := startMCP(t, env, nil)
	withJob(live)
	deadPid, livePid := dead.cmd.Process.Pid, live.cmd.Process.Pid
	deadState, liveState := stateOf(tmp, deadPid), stateOf(tmp, livePid)
	if len(deadState) != 2 || len(liveState) != 2 {
		t.Fatalf("state directories: the first server's %v, the second's %v", deadState, liveState)
	}
	for _, d := range append(deadState, liveState...) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want mode 0700", d, fi.Mode(), err)
		}
		files, _ := filepath.Glob(filepath.Join(d, "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
			}
		}
	}
	dead.cmd.Process.Kill()
	dead.cmd.Wait()
	if left := stateOf(tmp, deadPid); len(left) != 2 {
		t.Fatalf("after SIGKILL: %v", left)
	}
	next := startMCP(t, env, nil)
	if left := stateOf(tmp, deadPid); len(left) != 0 {
		t.Errorf("the next start left the killed server's state: %v", left)
	}
	if now := stateOf(tmp, livePid); len(now) != 2 {
		t.Errorf("the live server's state was touched: %v", now)
	}
	for _, s := range []*mcpServer{live, next} {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
		if left := stateOf(tmp, s.cmd.Process.Pid); len(left) != 0 {
			t.Errorf("a server that ended left its state: %v", left)
		}
	}
}

// The same for corral shell: a killed one's session state and job logs go
// at the next start.
func TestShellKilledLeavesNoStateAfterTheNextStart(t *testing.T) {
	tmp := memTempDir(t)
	cmd := exec.Command(corralBin, "shell")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_RUNTIME_DIR="+tmp)
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fmt.Fprintln(in, "export SECRET=s3cret")
	fmt.Fprintln(in, ":bg sleep 300")
	pid := cmd.Process.Pid
	testutil.WaitFor(t, 30*time.Second, "the session and the job's log", func() bool { return len(stateOf(tmp, pid)) == 2 })
	cmd.Process.Kill()
	cmd.Wait()
	next := exec.Command(corralBin, "shell", "-c", "true")
	next.Env = cmd.Env
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if left := stateOf(tmp, pid); len(left) != 0 {
		t.Errorf("the next start left the killed shell's state: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "corral-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
