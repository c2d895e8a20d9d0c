package proc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// needSandbox skips t, saying why, when this machine cannot build the
// sandbox.
func needSandbox(t *testing.T) {
	t.Helper()
	if why := sandboxProblem(t); why != nil {
		t.Skipf("SKIP: this machine cannot build the sandbox: %v", why)
	}
}

// workspace returns a new directory the test's user owns, for a sandbox's
// workspace.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSandboxWritesOnlyTheWorkspaceAndReachesNothing is the sandbox
// issue's acceptance line, through the supervision core: the workspace is
// written, /etc is not, a listener on the host's loopback cannot be
// reached, the command is in a network namespace other than corral's with
// lo alone (up), and the result says what held.
func TestSandboxWritesOnlyTheWorkspaceAndReachesNothing(t *testing.T) {
	needSandbox(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	ws := workspace(t)
	tag := testutil.Tag(t)
	script := `echo x > /etc/corral-sandbox-test && echo WROTE-ETC
echo ok > ./ok
exec 3<>/dev/tcp/127.0.0.1/PORT && echo CONNECTED
` + testutil.NetnsProbe + `true`
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", strings.ReplaceAll(script, "PORT", strconv.Itoa(port))},
		Env:     []string{testutil.TagEnvVar(tag)},
		Dir:     ws,
		Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout.Text() + res.Stderr.Text()
	if strings.Contains(out, "WROTE-ETC") || strings.Contains(out, "CONNECTED") {
		t.Fatalf("the sandbox did not hold:\n%s", out)
	}
	testutil.AssertOwnNetns(t, out)
	if _, err := os.Stat("/etc/corral-sandbox-test"); err == nil {
		os.Remove("/etc/corral-sandbox-test")
		t.Fatal("the run wrote /etc")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "ok")); err != nil || string(b) != "ok\n" {
		t.Fatalf("the workspace was not written: %q %v\n%s", b, err, out)
	}
	r := res.Sandbox
	if r == nil || r.Mode != corral.SandboxWorkspace || r.Network != corral.NetworkNone || len(r.Writable) != 1 || r.LandlockABI == 0 {
		t.Fatalf("sandbox report %+v", r)
	}
	for _, m := range []string{"user namespace", "mount namespace", "pid namespace", "network namespace", "landlock", "seccomp"} {
		if !contains(r.Mechanisms, m) {
			t.Errorf("mechanisms %v lack %q", r.Mechanisms, m)
		}
	}
	if res.Binding != proc.BindingPidNamespace {
		t.Errorf("binding %q", res.Binding)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

// TestSandboxedTreeIsTornDownOnTimeout: a sandboxed run's escapees die on
// its timeout, and its private /tmp goes with it.
func TestSandboxedTreeIsTornDownOnTimeout(t *testing.T) {
	needSandbox(t)
	tag := testutil.Tag(t)
	left := privateTmp(t)
	clock := testutil.StartSchedClock()
	start := time.Now()
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", "echo kept > /tmp/x; trap '' TERM; sleep 600 & setsid sleep 600 & (sleep 600 &); echo up; sleep 600"},
		Env:     []string{testutil.TagEnvVar(tag)},
		Dir:     workspace(t),
		Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
		Timeout: 500 * time.Millisecond,
		Grace:   200 * time.Millisecond,
		Drain:   100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Corral's own clock holds the bound; the wall clock is a backstop.
	assertOwnBounds(t, res, 200*time.Millisecond)
	if took := time.Since(start); took > 500*time.Millisecond+200*time.Millisecond+100*time.Millisecond+2*time.Second+clock.Waited() {
		t.Errorf("returned after %v (%v of CPU starvation)", took, clock.Waited())
	}
	if !res.TimedOut || res.Survivors != 0 {
		t.Fatalf("timed out %v survivors %d %s", res.TimedOut, res.Survivors, res.SurvivorNote)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
	testutil.AssertNoZombies(t, 2*time.Second)
	if l := left(); len(l) > 0 {
		t.Errorf("private /tmp directories left: %v", l)
	}
}

// TestSandboxRefusesWhatItCannotHonour: bad settings fail before anything
// runs.
func TestSandboxRefusesWhatItCannotHonour(t *testing.T) {
	needSandbox(t)
	for name, spec := range map[string]*proc.Spec{
		"missing writable root": {Args: []string{"true"}, Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{"/no/such/dir"}}},
		"relative path":         {Args: []string{"true"}, Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace, DenyRead: []string{"rel"}}},
		"settings without mode": {Args: []string{"true"}, Sandbox: corral.Sandbox{Network: corral.NetworkHost}},
		"writable root /":       {Args: []string{"true"}, Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{"/"}}},
	} {
		if _, err := proc.Run(context.Background(), spec); err == nil {
			t.Errorf("%s: started", name)
		}
	}
	// A command missing inside the sandbox is the command's fault, not the
	// sandbox's.
	_, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"/no/such/program"}, Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}})
	if !errors.Is(err, proc.ErrNotFound) || errors.Is(err, proc.ErrSandboxUnavailable) {
		t.Errorf("missing program: %v", err)
	}
}

// TestEnclosureSharesOneSandboxAmongItsRuns: the runs of an enclosure share
// /tmp and the network (a server one starts is reachable from the next),
// each keeps a tree of its own (a timeout kills only its own), another
// enclosure sees nothing of it, and Close ends everything inside.
func TestEnclosureSharesOneSandboxAmongItsRuns(t *testing.T) {
	needSandbox(t)
	tag := testutil.Tag(t)
	left := privateTmp(t)
	ws := workspace(t)
	e, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}, Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	run := func(script string, timeout time.Duration) *proc.Result {
		t.Helper()
		res, err := proc.Run(context.Background(), &proc.Spec{
			Args: []string{"bash", "-c", script}, Env: []string{testutil.TagEnvVar(tag)},
			Enclosure: e, Timeout: timeout, Grace: 200 * time.Millisecond, Leftovers: corral.LeftoversDetach,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A server that outlives the run that started it (detached), as a
	// background job does.
	server := `python3 -c 'import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 18765)); s.listen()
print("listening", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello from the job\n"); c.close()' </dev/null >/tmp/server.log 2>&1 &
for i in $(seq 100); do grep -q listening /tmp/server.log 2>/dev/null && break; sleep 0.1; done; cat /tmp/server.log`
	if r := run(server, 30*time.Second); !strings.Contains(r.Stdout.Text(), "listening") || r.Detached == 0 {
		t.Fatalf("server: %+v\n%s%s", r, r.Stdout.Text(), r.Stderr.Text())
	}
	if r := run(`exec 3<>/dev/tcp/127.0.0.1/18765 && cat <&3; echo shared > /tmp/note; pwd`, 30*time.Second); !strings.Contains(r.Stdout.Text(), "hello from the job") || !strings.Contains(r.Stdout.Text(), ws) {
		t.Fatalf("the next run did not reach the job's server or start in the workspace:\n%s%s", r.Stdout.Text(), r.Stderr.Text())
	}
	if r := run(`cat /tmp/note`, 30*time.Second); r.Stdout.Text() != "shared\n" {
		t.Fatalf("/tmp not shared: %q %q", r.Stdout.Text(), r.Stderr.Text())
	}
	// A run that times out takes only its own tree.
	if r := run(`trap '' TERM; sleep 600 & echo up; sleep 600`, 300*time.Millisecond); !r.TimedOut || r.Survivors != 0 {
		t.Fatalf("timed-out run: %+v", r)
	}
	if r := run(`exec 3<>/dev/tcp/127.0.0.1/18765 && cat <&3`, 30*time.Second); !strings.Contains(r.Stdout.Text(), "hello from the job") {
		t.Fatalf("the server died with another run's timeout: %q", r.Stderr.Text())
	}
	// Another enclosure sees neither the note nor the server.
	other, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}, Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	res, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"bash", "-c", "cat /tmp/note; exec 3<>/dev/tcp/127.0.0.1/18765 && echo REACHED"}, Enclosure: other})
	other.Close()
	if err != nil || strings.Contains(res.Stdout.Text(), "shared") || strings.Contains(res.Stdout.Text(), "REACHED") {
		t.Fatalf("another enclosure saw this one: %q %v", res.Stdout.Text(), err)
	}
	if len(testutil.Tagged(tag)) == 0 {
		t.Fatal("the server is gone before Close")
	}
	e.Close()
	testutil.AssertNoTagged(t, tag, 2*time.Second)
	if _, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}, Enclosure: e}); !errors.Is(err, proc.ErrEnclosureClosed) {
		t.Errorf("a run in a closed enclosure: %v", err)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("private /tmp directories left: %v", l)
	}
	if r := e.Report(); r.Mode != corral.SandboxWorkspace || len(r.Mechanisms) == 0 {
		t.Errorf("report %+v", r)
	}
}

// TestEnclosureReusesItsInitsAndLeavesNothing: an enclosure's runs are
// served by the same init, one after another (a command costs a round trip,
// not an init's start); what a run left (a daemon in a session of its own)
// is gone the moment Run returns, before the init serves the next; and
// Close lets go of the idle inits, so that not one descriptor of them is
// left in this process when it returns.
func TestEnclosureReusesItsInitsAndLeavesNothing(t *testing.T) {
	needSandbox(t)
	tag := testutil.Tag(t)
	t.Cleanup(func() { testutil.KillTagged(tag) })
	before := testutil.FDs()
	e, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}, Workdir: workspace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	inits := map[string]int{}
	for i := range 6 {
		res, err := proc.Run(context.Background(), &proc.Spec{
			Args: []string{"bash", "-c", "setsid -f sleep 600 </dev/null >/dev/null 2>&1; echo $PPID"},
			Env:  []string{testutil.TagEnvVar(tag)}, Enclosure: e, Timeout: exitsTimeout,
		})
		if left := testutil.Tagged(tag); len(left) > 0 {
			t.Fatalf("run %d: %d processes of the tree alive when Run returned: %v", i, len(left), left)
		}
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run %d: %v %+v %q", i, err, res, res.Stderr.Text())
		}
		inits[strings.TrimSpace(res.Stdout.Text())]++
	}
	if len(inits) != 1 {
		t.Errorf("the runs were served by %d inits, want 1 (the pool's): %v", len(inits), inits)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if after := testutil.FDs(); after > before {
		t.Errorf("%d descriptors before the enclosure, %d once it is closed", before, after)
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
}

// TestSupervisionHoldsAsNobody runs the escape scenarios, the supervisor's
// death and the sandbox as an unprivileged user: no cgroup, an init per
// run, user namespaces made by nobody.
func TestSupervisionHoldsAsNobody(t *testing.T) {
	if testutil.AsNobody() {
		t.Skip("SKIP: already nobody")
	}
	testutil.RunAsNobody(t, "^(TestRunHoldsTheDeadlineAndLeavesNothing|TestSupervisorKilledTakesItsTreeWithIt|TestSandboxWritesOnlyTheWorkspaceAndReachesNothing|TestSandboxedTreeIsTornDownOnTimeout|TestEnclosureSharesOneSandboxAmongItsRuns|TestEnclosureReusesItsInitsAndLeavesNothing|TestSandboxReachesOnlyAllowedHostsThroughTheProxy|TestSandboxReachesTheAllowedHostLoopbackPortOnly)$")
}

// privateTmp points the process's temporary directory, where corral makes
// its sandboxes' private /tmp, to a new directory of the test's, and
// returns a func that lists what is left there.
func privateTmp(t *testing.T) func() []string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "corral-sandbox-*"))
		return m
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSandboxReachesOnlyAllowedHostsThroughTheProxy: under network none
// with --allow-host, the run reaches the allowed host through corral's
// proxy (its HTTP_PROXY), a host not allowed gets 403 and is reported, and
// a direct connection goes nowhere.
func TestSandboxReachesOnlyAllowedHostsThroughTheProxy(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: needs python3 for its HTTP client")
	}
	// A loopback address would be the run's own loopback (and in
	// NO_PROXY): serve on one of the machine's other addresses.
	ip := hostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from the allowed host")
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	allowed := strings.TrimPrefix(srv.URL, "http://")
	script := `import os, urllib.request
def get(url):
    try:
        return urllib.request.urlopen(url, timeout=20).read().decode()
    except Exception as e:
        return "refused: %s" % e
print("allowed:", get("http://` + allowed + `/"))
print("denied:", get("http://denied.example:8080/"))
print("proxy:", os.environ.get("HTTP_PROXY"))
`
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"python3", "-c", script},
		Dir:     workspace(t),
		Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly, AllowHosts: []string{allowed}},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout.Text()
	t.Logf("%s: %s%s", res.Status(), out, res.Stderr.Text())
	if !strings.Contains(out, "allowed: hello from the allowed host") || !strings.Contains(out, "denied: refused") || !strings.Contains(out, "403") {
		t.Fatalf("through the proxy:\n%s%s", out, res.Stderr.Text())
	}
	r := res.Sandbox
	if r == nil || !contains(r.DeniedHosts, "denied.example:8080") || !contains(r.Mechanisms, "egress proxy") {
		t.Fatalf("report %+v", r)
	}
	// Without the proxy, nothing of the host's network is there.
	res, err = proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", "exec 3<>/dev/tcp/" + strings.Replace(allowed, ":", "/", 1) + " && echo CONNECTED"},
		Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly, AllowHosts: []string{allowed}},
		Dir:     workspace(t),
	})
	if err != nil || strings.Contains(res.Stdout.Text(), "CONNECTED") {
		t.Fatalf("a direct connection got through: %q %v", res.Stdout.Text(), err)
	}
}

// hostIP returns an IPv4 address of this machine other than loopback, or
// skips t.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("SKIP: needs a network address other than loopback")
	return ""
}
