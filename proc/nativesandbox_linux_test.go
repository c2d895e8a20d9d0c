package proc_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/initelf"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// sandboxProbe prints what a sandboxed command sees of its sandbox, in a
// form that does not change from run to run: its mounts (mount point,
// options, type, source, superblock options; sorted, as the Go init binds
// the devices in no set order), its credentials and filter, /dev, the
// private directories, its network's interfaces and the listeners in it,
// and what it may write and read of the paths it is given (WRITE,
// DENIED).
const sandboxProbe = `
awk '{ for (i = 7; $i != "-"; i++); print $5, $6, $(i+1), $(i+2), $(i+3) }' /proc/self/mountinfo | sort
grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status
ls -la /dev | awk 'NR > 1 { print $1, $3, $4, $NF }'
stat -c '%n %a %F' /tmp /var/tmp /dev/shm /dev/pts . 2>&1
awk -F: 'NR > 2 { print $1 }' /proc/net/dev
# the listeners of a network of the sandbox's own (the host's change as they will)
if [ "$(awk -F: 'NR > 2' /proc/net/dev | wc -l)" = 1 ]; then
	awk 'NR > 1 && $4 == "0A" { print "listening", $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort
fi
for p in . /tmp /var/tmp /dev/shm /etc $WRITE; do
	if (echo x > "$p/probe-$$") 2>/dev/null; then echo "$p writable"; rm -f "$p/probe-$$"; else echo "$p read-only"; fi
done
for p in $DENIED; do
	if [ -d "$p" ]; then echo "$p dir: $(ls -A "$p" | wc -l) entries"; else echo "$p: $(cat "$p" 2>&1 | wc -c) bytes"; fi
done
pwd; id -u; hostname
`

// TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox: on linux/amd64 a
// sandboxed run is held by the native init (its pid 1 has one thread,
// where a Go program has several), and what the command sees of the
// sandbox (mounts, credentials, filter, devices, network, what it may
// write and read) is what the Go init builds, for every part of the
// policy the native init builds itself: writable roots inside and outside
// the private /tmp and inside a denied directory, denied directories and
// files, kept sockets under /tmp, network none and host, the listeners of
// the egress proxy and the host loopback ports, workspace and read-only
// modes.
func TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox(t *testing.T) {
	needSandbox(t)
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	defer shim.UseGoInitOnly(false)
	ws := workspace(t)
	extra, err := os.MkdirTemp(os.Getenv("HOME"), ".corral-native-test-")
	if err != nil {
		extra = workspace(t)
	} else {
		t.Cleanup(func() { os.RemoveAll(extra) })
	}
	os.Chmod(extra, 0o755)
	secretDir := filepath.Join(ws, "secret")
	os.Mkdir(secretDir, 0o755)
	os.WriteFile(filepath.Join(secretDir, "key"), []byte("k"), 0o644)
	secretFile := filepath.Join(extra, "token")
	os.WriteFile(secretFile, []byte("token"), 0o644)
	sockDir := workspace(t)
	sock := filepath.Join(sockDir, "kept.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A writable root inside a denied directory: its mount point is made
	// in the denial's tmpfs before that is made read-only.
	hidden := filepath.Join(extra, "hidden")
	inner := filepath.Join(hidden, "inner")
	os.MkdirAll(inner, 0o755)
	os.WriteFile(filepath.Join(hidden, "key"), []byte("k"), 0o644)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	sandboxes := map[string]corral.Sandbox{
		"allow-host": {Mode: corral.SandboxWorkspace, AllowHosts: []string{host.Addr().String(), "localhost:" + strconv.Itoa(host.Addr().(*net.TCPAddr).Port+1), "example.com"}},
		"nested":     {Mode: corral.SandboxWorkspace, Writable: []string{inner}, DenyRead: []string{hidden}},
		"workspace":  {Mode: corral.SandboxWorkspace, Writable: []string{extra}, DenyRead: []string{secretDir, secretFile}, AllowUnixSockets: []string{sock}},
		"read-only":  {Mode: corral.SandboxReadOnly},
		"host":       {Mode: corral.SandboxWorkspace, Network: corral.NetworkHost},
	}
	for name, sb := range sandboxes {
		t.Run(name, func(t *testing.T) {
			see := func(goInit bool) (string, string) {
				t.Helper()
				shim.UseGoInitOnly(goInit)
				proc.ForgetStarts()
				res, err := proc.Run(context.Background(), &proc.Spec{
					Args:    []string{"bash", "-c", `awk '/^Threads/ { print $2 }' /proc/1/status`},
					Dir:     ws,
					Sandbox: sb,
					Timeout: time.Minute,
				})
				if err != nil {
					t.Fatal(err)
				}
				threads := strings.TrimSpace(res.Stdout.Text())
				res, err = proc.Run(context.Background(), &proc.Spec{
					Args:    []string{"bash", "-c", sandboxProbe},
					Env:     []string{"WRITE=" + extra + " " + sockDir + " " + inner + " " + hidden, "DENIED=" + secretDir + " " + secretFile + " " + hidden},
					Dir:     ws,
					Sandbox: sb,
					Timeout: time.Minute,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.ExitCode != 0 {
					t.Fatalf("the probe exited %d: %s", res.ExitCode, res.Stderr.Text())
				}
				// The Go init keeps its own program in view when it lies
				// under /tmp (a test's); the native init needs none of it.
				var lines []string
				exe, _ := os.Executable()
				for _, l := range strings.Split(res.Stdout.Text()+res.Stderr.Text(), "\n") {
					if exe == "" || !strings.HasPrefix(l, exe+" ") {
						lines = append(lines, l)
					}
				}
				return threads, strings.Join(lines, "\n")
			}
			nativeThreads, native := see(false)
			goThreads, goSees := see(true)
			if nativeThreads != "1" || goThreads == "1" {
				t.Fatalf("threads of pid 1: %q with the native init (want 1), %q with the Go init (want more); %s", nativeThreads, goThreads, proc.NativeInitState())
			}
			if native != goSees {
				t.Fatalf("the native init's sandbox differs from the Go init's:\n--- native\n%s\n--- Go\n%s", native, goSees)
			}
			t.Logf("both inits:\n%s", native)
		})
	}
}

// TestNativeSandboxHandsItsGateToTheGoInit: under a kernel whose Landlock
// cannot control pathname Unix sockets, a command's connect goes to a
// gate. The native init answers itself the connects the gate would answer
// without connecting anything: a socket path that is not there (ENOENT,
// absolute or relative to the command's directory; the C library's name
// service cache at a user lookup, such as bash's without SHELL), a path
// that is no socket (ECONNREFUSED) and a socket outside the writable
// roots (EACCES); and it connects a non-blocking TCP socket itself (here
// to a host loopback port's listener), and keeps the run. At the first connect that needs a
// socket connected (here one of AllowUnixSockets outside the roots) it
// executes the Go init in its own process, with that call, and the gate
// then answers it and every later one as it does for the Go init's own
// sandboxes (allowed sockets connected, a socket outside the writable
// roots refused). The run ends
// and leaves nothing, the command's end reported once. The Go init's gate,
// serving the same command from its start, answers every connect alike.
func TestNativeSandboxHandsItsGateToTheGoInit(t *testing.T) {
	needSandbox(t)
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: python3 is not installed")
	}
	ws := workspace(t)
	outsideDir, err := os.MkdirTemp(os.Getenv("HOME"), ".corral-gate-test-")
	if err != nil {
		t.Skipf("SKIP: no directory outside /tmp for a socket: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outsideDir) })
	os.Chmod(outsideDir, 0o755)
	var allowedN, outsideN, keptN atomic.Int32
	allowed := testutil.ListenCounting(t, "unix", filepath.Join(ws, "allowed.sock"), &allowedN)
	outside := testutil.ListenCounting(t, "unix", filepath.Join(outsideDir, "outside.sock"), &outsideN)
	kept := testutil.ListenCounting(t, "unix", filepath.Join(outsideDir, "kept.sock"), &keptN)
	var hostN atomic.Int32
	host := testutil.ListenCounting(t, "tcp", "127.0.0.1:0", &hostN)
	_, port, _ := net.SplitHostPort(host)
	tag := testutil.Tag(t)
	missing := filepath.Join(ws, "missing.sock")
	plain := filepath.Join(ws, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	script := `
import select, socket, sys
def init():
    return "go" if [l.split()[1] for l in open("/proc/1/status") if l.startswith("Threads")][0] != "1" else "native"
print("before", init())
for path in sys.argv[1:]:
    if path == "--":
        print("between", init())
        continue
    if path.startswith("tcp:"):
        # A non-blocking connect, as most network clients make.
        s = socket.socket()
        s.setblocking(False)
        print(path, "started", s.connect_ex(("127.0.0.1", int(path[4:]))))
        select.select([], [s], [], 10)
        s.setblocking(True)
        s.sendall(b"hi\n")
        print(path, "answered", s.recv(16).decode().strip())
        continue
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b"hi\n")
        print(path, "answered", s.recv(16).decode().strip())
    except OSError as e:
        print(path, "refused", e.errno)
print("after", init())
`
	run := func() (*proc.Result, string) {
		t.Helper()
		res, err := proc.Run(context.Background(), &proc.Spec{
			Args:    []string{"python3", "-c", script, missing, "missing.sock", plain, outside, "tcp:" + port, "--", kept, allowed, outside, allowed},
			Env:     []string{testutil.TagEnvVar(tag)},
			Dir:     ws,
			Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace, AllowUnixSockets: []string{kept}, AllowHosts: []string{"localhost:" + port}},
			Timeout: 20 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res, res.Stdout.Text() + res.Stderr.Text()
	}
	// The Go init's gate, from the start, gives the same answers.
	defer shim.UseGoInitOnly(false)
	shim.UseGoInitOnly(true)
	_, goOut := run()
	shim.UseGoInitOnly(false)
	allowedN.Store(0)
	keptN.Store(0)
	hostN.Store(0)
	res, out := run()
	answers := func(out string) string {
		var a []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " refused ") || strings.Contains(l, " answered ") {
				a = append(a, l)
			}
		}
		return strings.Join(a, "\n")
	}
	if answers(out) != answers(goOut) {
		t.Errorf("the native init's answers differ from the Go init's gate's:\n--- native\n%s\n--- Go\n%s", out, goOut)
	}
	gate := contains(res.Sandbox.Mechanisms, "unix socket gate")
	want := []string{"before native", missing + " refused 2", "missing.sock refused 2", plain + " refused 111",
		outside + " refused 13", "tcp:" + port + " started 115", "tcp:" + port + " answered hi",
		"between native", kept + " answered hi", allowed + " answered hi"}
	if gate {
		want = append(want, "after go")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("want %q in:\n%s\n(%s)", w, out, proc.NativeInitState())
		}
	}
	if res.ExitCode != 0 || allowedN.Load() != 2 || keptN.Load() != 1 || outsideN.Load() != 0 || hostN.Load() != 1 {
		t.Errorf("exit %d; the socket in the workspace accepted %d (want 2), the allowed one outside it %d (want 1), the one outside the roots %d (want 0), the host loopback port %d (want 1)\n%s",
			res.ExitCode, allowedN.Load(), keptN.Load(), outsideN.Load(), hostN.Load(), out)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}
