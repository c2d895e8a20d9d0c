package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
)

// escapees leaves a background job, a setsid escapee, a double fork and a
// daemon that clears its environment (tagged in its argv), then waits.
const escapees = `sleep 600 & setsid sleep 600 & (sleep 600 &); setsid -f env -i bash -c 'exec 0<&- 1>&- 2>&-; (exec -a TAG-daemon sleep 600 &)'; echo up; sleep 600`

// TestKilledCorralTakesItsTreesWithIt is guarantee 7 for every corral
// command that runs things: killed with SIGKILL while a tree of escapees
// runs, it leaves no process of it after a second (plus what the machine
// withheld of the CPU).
func TestKilledCorralTakesItsTreesWithIt(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		stdin func(tag string) string
	}{
		{name: "run", args: []string{"run", "--", "bash", "-c", escapees}},
		{name: "run sandboxed", args: []string{"run", "--sandbox", "read-only", "--", "bash", "-c", escapees}},
		{name: "shell", args: []string{"shell", "-c", escapees}},
		{name: "shell sandboxed", args: []string{"shell", "--sandbox", "read-only", "-c", escapees}},
		{name: "mcp sandboxed", args: []string{"mcp", "--sandbox", "read-only"}, stdin: mcpRunCommand},
		{name: "headless", args: []string{"headless", "--idle-timeout", "10m", "--", "bash", "-c", escapees}},
		{name: "mcp", args: []string{"mcp"}, stdin: mcpRunCommand},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			tag := testutil.Tag(t)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "TAG", tag)
			}
			cmd := exec.Command(corralBin, args...)
			cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
			cmd.Dir = t.TempDir()
			var in io.WriteCloser
			if c.stdin != nil {
				var err error
				if in, err = cmd.StdinPipe(); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if in != nil {
				io.WriteString(in, c.stdin(tag))
				defer in.Close()
			}
			waitDone := make(chan struct{})
			go func() { cmd.Wait(); close(waitDone) }()
			if !testutil.Eventually(30*time.Second, func() bool { return len(testutil.Tagged(tag)) >= 5 }) {
				cmd.Process.Kill()
				<-waitDone
				t.Fatalf("the tree did not come up: %d tagged\n%s", len(testutil.Tagged(tag)), out.String())
			}
			kids, _ := procfs.Children(cmd.Process.Pid)
			clock := testutil.StartSchedClock()
			cmd.Process.Signal(syscall.SIGKILL)
			<-waitDone
			killed := time.Now()
			if !testutil.Eventually(10*time.Second+clock.Waited(), func() bool { return len(testutil.Tagged(tag)) == 0 }) {
				t.Fatalf("%d processes outlived corral %s: %v", len(testutil.Tagged(tag)), c.name, testutil.Tagged(tag))
			}
			if took := time.Since(killed); took > time.Second+clock.Waited() {
				t.Errorf("the tree took %v to go after corral's death (%v of CPU starvation)", took, clock.Waited())
			}
			// What the killed corral left to this process (a subreaper:
			// its guardian, its runs' inits) is reaped once it has died.
			testutil.WaitFor(t, 20*time.Second, "the dead corral's children to go", func() bool {
				testutil.ReapZombies()
				for _, k := range kids {
					if _, err := procfs.ReadStat(k); err == nil {
						return false
					}
				}
				return true
			})
		})
	}
}

// mcpRunCommand is what an MCP client says to have corral mcp run the
// escapees as a background job.
func mcpRunCommand(tag string) string {
	msgs := []any{
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}}},
		map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
		map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
			"name": "run_command", "arguments": map[string]any{"command": strings.ReplaceAll(escapees, "TAG", tag), "timeout_ms": 600000}}},
	}
	var b strings.Builder
	for _, m := range msgs {
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSandboxAcceptance is the sandbox's acceptance line, as root and as
// nobody: corral run --sandbox workspace writes ./ok only, cannot write
// /etc, and cannot connect to a listener on the host's loopback.
func TestSandboxAcceptance(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	script := `echo x > /etc/x; echo ok > ./ok; exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo CONNECTED`
	for _, who := range []string{"root", "nobody"} {
		t.Run(who, func(t *testing.T) {
			bin, dir := corralBin, t.TempDir()
			var cred *syscall.Credential
			if who == "nobody" {
				u := needNobody(t)
				uid, _ := strconv.Atoi(u.Uid)
				gid, _ := strconv.Atoi(u.Gid)
				open := openDir(t)
				bin = copyCorral(t, open)
				dir = filepath.Join(open, "work")
				os.Mkdir(dir, 0o755)
				os.Chown(dir, uid, gid)
				cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
			} else if os.Geteuid() != 0 {
				t.Skip("SKIP: the root case needs root")
			}
			cmd := exec.Command(bin, "run", "--json", "--sandbox", "workspace", "--", "bash", "-c", script)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "LANG=C.UTF-8"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			out, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatalf("corral run: %v\n%s", err, out)
			}
			var res runJSON
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if strings.Contains(res.Stdout, "CONNECTED") || res.Sandbox == nil || res.Binding == "" {
				t.Fatalf("the sandbox did not hold: %+v", res)
			}
			if _, err := os.Stat("/etc/x"); err == nil {
				os.Remove("/etc/x")
				t.Fatal("the run wrote /etc/x")
			}
			if b, err := os.ReadFile(filepath.Join(dir, "ok")); err != nil || string(b) != "ok\n" {
				t.Fatalf("./ok: %q %v (stderr %q)", b, err, res.Stderr)
			}
		})
	}
}
