package sandbox_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/egress"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/sandbox/sandboxtest"
	"github.com/corralrun/corral/internal/testutil"
)

func TestProbeSaysWhatTheMachineOffers(t *testing.T) {
	s, err := sandbox.Probe()
	t.Logf("Probe: %+v, %v", s, err)
	if err != nil {
		if !errors.Is(err, sandbox.ErrUnavailable) {
			t.Fatalf("Probe error does not wrap ErrUnavailable: %v", err)
		}
		t.Skipf("SKIP: %v", err)
	}
	if !s.Namespaces || !s.MountAPI || !s.Seccomp || s.LandlockABI < 1 {
		t.Fatalf("Probe succeeded without every mechanism: %+v", s)
	}
}

func TestPrepareRefusesOutsideANewNamespace(t *testing.T) {
	p := &sandbox.Policy{Mode: corral.SandboxWorkspace, Workdir: t.TempDir(), TmpDir: t.TempDir()}
	if _, _, err := sandbox.Prepare(p); err == nil || !strings.Contains(err.Error(), "pid 1") {
		t.Fatalf("Prepare in the test process: %v, want a refusal", err)
	}
}

func TestPrepareRefusesAUsedPrivateTmp(t *testing.T) {
	f := newFixture(t)
	tmp := t.TempDir()
	os.WriteFile(tmp+"/left", nil, 0o644)
	f.policy.TmpDir = tmp
	_, _, err := sandboxtest.Run(sandboxtest.Config{Policy: f.policy, Args: []string{"/bin/true"}}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "new, empty directory") {
		t.Fatalf("a private /tmp with a file in it: %v, want a refusal", err)
	}
}

func TestWritesStayInTheWritableRoots(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		outDir := f.hostPath("outside", true, "")
		outFile := f.hostPath("outside/file", false, "orig")
		extra := f.hostPath("extra", true, "")
		f.policy.Writable = []string{extra}
		f.probe("writes", f.ws, extra, outDir, outFile)

		if b, err := os.ReadFile(outFile); err != nil || string(b) != "orig" {
			t.Errorf("the file outside is now %q, %v", b, err)
		}
		for _, gone := range []string{outDir + "/new", outDir + "/renamed", f.ws + "/hard", f.ws + "/moved"} {
			if _, err := os.Lstat(gone); err == nil {
				t.Errorf("%s exists on the host", gone)
			}
		}
		for _, made := range []string{f.ws + "/d/ok", extra + "/ok"} {
			if _, err := os.Stat(made); err != nil {
				t.Errorf("what the run wrote in a writable root is missing: %v", err)
			}
		}
	})
}

func TestReadOnlyModeWritesOnlyTmp(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		f.policy.Mode = corral.SandboxReadOnly
		code, out, _ := f.run([]string{"/bin/bash", "-c", "echo x > ./x; echo y > /tmp/y && cat /tmp/y"})
		if code != 0 || !strings.Contains(out, "./x: Read-only file system") || !strings.HasSuffix(out, "\ny\n") {
			t.Fatalf("exit %d, output %q: want the workspace write refused and /tmp written", code, out)
		}
		if _, err := os.Stat(f.ws + "/x"); err == nil {
			t.Fatal("read-only mode wrote the workspace")
		}
	})
}

func TestTmpIsPrivateAndGoesWithTheRun(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		marker, err := os.CreateTemp("", "corral-host-tmp-marker-")
		if err != nil {
			t.Fatal(err)
		}
		marker.Close()
		t.Cleanup(func() { os.Remove(marker.Name()) })
		f.probe("tmp", marker.Name())

		if b, err := os.ReadFile(filepath.Join(f.policy.TmpDir, "run-file")); err != nil || string(b) != "from the run" {
			t.Fatalf("the run's /tmp/run-file is not in its private directory: %q %v", b, err)
		}
		for _, leak := range []string{"/tmp/run-file", "/var/tmp/run-file", "/dev/shm/run-file"} {
			if b, err := os.ReadFile(leak); err == nil && string(b) == "from the run" {
				os.Remove(leak)
				t.Errorf("the run wrote the host's %s", leak)
			}
		}
		// corral removes the private directory after the run: with it goes
		// everything the run wrote to /tmp.
		if err := os.RemoveAll(f.policy.TmpDir); err != nil {
			t.Fatalf("remove the private /tmp: %v", err)
		}
	})
}

func TestDenyReadHidesFilesAndDirectories(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		wsFile := filepath.Join(f.ws, "secret.txt")
		os.WriteFile(wsFile, []byte("s3cret"), 0o644)
		wsDir := filepath.Join(f.ws, "secretdir")
		os.Mkdir(wsDir, 0o755)
		os.WriteFile(wsDir+"/key", []byte("k3y"), 0o644)
		hostFile := f.hostPath("token", false, "t0ken")
		hostDir := f.hostPath("private", true, "")
		f.hostPath("private/key", false, "k3y")
		// A writable root inside a denied directory stays visible and
		// writable; the rest of the directory stays hidden.
		inside := f.hostPath("private/project", true, "")
		f.policy.Writable = []string{inside}
		f.policy.DenyRead = []string{wsFile, wsDir, hostFile, hostDir}
		code, out, _ := f.run([]string{"/bin/bash", "-c", "echo ok > " + inside + "/made && ls -A " + hostDir})
		if code != 0 || strings.TrimSpace(out) != "project" {
			t.Fatalf("a writable root inside a denied directory: exit %d, %q; want it alone in the listing", code, out)
		}
		f.policy.Writable = nil
		f.probe("deny", wsFile, hostFile, wsDir, hostDir)
		if b, _ := os.ReadFile(wsFile); string(b) != "s3cret" {
			t.Fatalf("the denied file changed on the host: %q", b)
		}
	})
}

func TestNetworkNoneReachesNothingOfTheHost(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		var accepted atomic.Int32
		tcp := testutil.ListenCounting(t, "tcp", "127.0.0.1:0", &accepted)
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		abstract := "corral-sandbox-test-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(t.Name(), "/", "-")
		testutil.ListenCounting(t, "unix", "@"+abstract, &accepted)

		f.probe("net", tcp, udp.LocalAddr().String(), abstract)

		if n := accepted.Load(); n != 0 {
			t.Errorf("the host's listeners accepted %d connections from the sandbox", n)
		}
		udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, _, err := udp.ReadFrom(make([]byte, 16)); err == nil {
			t.Error("the host's UDP socket received a datagram from the sandbox")
		}
	})
}

func TestNetworkHostKeepsTheHostsNetworkButNotItsSockets(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		f.policy.Network = corral.NetworkHost
		var tcpN, outsideN atomic.Int32
		tcp := testutil.ListenCounting(t, "tcp", "127.0.0.1:0", &tcpN)
		outside := testutil.ListenCounting(t, "unix", f.hostPath("ro", true, "")+"/outside.sock", &outsideN)
		f.probe("hostnet", tcp, outside)
		if tcpN.Load() != 1 || outsideN.Load() != 0 {
			t.Fatalf("the host's TCP listener accepted %d (want 1), the socket outside the roots %d (want 0)", tcpN.Load(), outsideN.Load())
		}
	})
}

func TestUnixSocketsOutsideTheRootsAreRefused(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		var outsideN, allowedN atomic.Int32
		roDir := f.hostPath("ro", true, "")
		outside := testutil.ListenCounting(t, "unix", roDir+"/outside.sock", &outsideN)
		allowedDir := f.hostPath("allowed", true, "")
		allowed := testutil.ListenCounting(t, "unix", allowedDir+"/allowed.sock", &allowedN)
		tmpSock, _ := filepath.EvalSymlinks(t.TempDir())
		allowedTmp := testutil.ListenCounting(t, "unix", tmpSock+"/a.sock", &allowedN)
		wsHost := testutil.ListenCounting(t, "unix", f.ws+"/host.sock", &allowedN)
		f.policy.AllowUnixSockets = []string{allowed, allowedTmp}

		f.probe("unix", outside, allowed, allowedTmp, wsHost, f.ws)

		if n := outsideN.Load(); n != 0 {
			t.Errorf("the socket outside the roots accepted %d connections", n)
		}
		if n := allowedN.Load(); n != 3 {
			t.Errorf("the allowed sockets accepted %d connections, want 3", n)
		}
	})
}

func TestHostProcessesAreInvisibleAndPrivilegesGone(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		tag := testutil.Tag(t)
		host := exec.Command("/bin/sh", "-c", "sleep 600", tag)
		host.Env = append(os.Environ(), testutil.TagEnvVar(tag))
		host.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := host.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			syscall.Kill(-host.Process.Pid, syscall.SIGKILL)
			host.Wait()
			// Its sleep, killed with it, is not this process's to wait
			// for: it goes once the kernel has torn it down, which a
			// loaded machine takes a moment over (and Tag's cleanup
			// would count it as left).
			testutil.Eventually(5*time.Second, func() bool { return len(testutil.Tagged(tag)) == 0 })
		})
		f.probe("procs", tag, strconv.Itoa(host.Process.Pid))
	})
}

func TestNothingOutlivesTheSandbox(t *testing.T) {
	f := newFixture(t)
	tag := testutil.Tag(t)
	code, _, _ := f.run([]string{"/bin/bash", "-c", "setsid sleep 600 & nohup sleep 600 >/dev/null 2>&1 & disown; exit 0"}, testutil.TagEnvVar(tag))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// The init was pid 1 of the sandbox's pid namespace: when it exited
	// the kernel killed what was left, escapees included.
	testutil.WaitFor(t, 10*time.Second, "the sandbox's background processes are gone", func() bool {
		return len(testutil.Tagged(tag)) == 0
	})
}

// toolChecks are the ordinary tools a sandboxed command must be able to
// use, each a script and the programs it needs.
var toolChecks = []struct {
	name   string
	needs  []string
	script []string
}{
	{"coreutils", nil, []string{
		"echo hello > a.txt && tr a-z A-Z < a.txt | grep -q HELLO",
		"mkdir -p d/e && cp a.txt d/e/ && mv d/e/a.txt d/b.txt && ln -s b.txt d/link && ls -la d >/dev/null && rm -r d",
		"sort a.txt | uniq | wc -l >/dev/null && sed -i s/hello/bye/ a.txt && grep -q bye a.txt && find . -name a.txt | grep -q a.txt",
		"tar czf t.tgz a.txt && tar xzf t.tgz -C /tmp && test -f /tmp/a.txt",
	}},
	{"python", []string{"python3"}, []string{
		`/usr/bin/env python3 -c 'import json, os, sqlite3, subprocess, tempfile; db = sqlite3.connect("t.db"); db.execute("create table t (x)"); db.commit(); d = tempfile.mkdtemp(); print("tools: python", json.dumps(subprocess.run(["true"]).returncode))'`,
		`/usr/bin/env python3 -c 'import os, pty; pid, fd = pty.fork(); os.execlp("true", "true") if pid == 0 else print("tools: pty", os.waitpid(pid, 0)[1])'`,
	}},
	{"git", []string{"git"}, []string{
		"git init -q repo && cd repo && echo x > f && git add f",
		"git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | grep -q first",
	}},
	{"gcc", []string{"gcc"}, []string{
		`printf '#include <stdio.h>\nint main(void){puts("tools: gcc ok");return 0;}\n' > c.c`,
		"gcc -O1 -o c c.c && ./c",
	}},
	{"go", []string{"go"}, []string{
		"mkdir hello && cd hello && printf 'module hello\\ngo 1.21\\n' > go.mod",
		`printf 'package main\nimport "fmt"\nfunc main() { fmt.Println("tools: go ok") }\n' > main.go`,
		"GOCACHE=$CACHE GOPATH=/tmp/gopath GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o hello . && ./hello",
	}},
}

// TestOrdinaryToolsWork runs each ordinary tool in the sandbox, a subtest
// each; a tool this machine lacks is a skipped subtest, with its reason.
func TestOrdinaryToolsWork(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		for _, tc := range toolChecks {
			t.Run(tc.name, func(t *testing.T) {
				for _, tool := range tc.needs {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("SKIP: %s is not installed", tool)
					}
				}
				f := newFixture(t)
				var env []string
				if tc.name == "go" {
					// A cold build of a Go program compiles the standard
					// library (a minute on a small machine): the run gets
					// this user's own build cache as a writable root, as an
					// agent's recipe would give it.
					cache := goBuildCache()
					if cache == "" {
						t.Skip("SKIP: go build needs a build cache of this user's (a cold one would compile the standard library)")
					}
					f.policy.Writable = append(f.policy.Writable, cache)
					env = append(env, "CACHE="+cache)
				}
				script := append([]string{"set -eu", `cd "$HOME"`}, tc.script...)
				script = append(script, "echo tools: done")
				code, out, _ := f.run([]string{"/bin/bash", "-c", strings.Join(script, "\n")}, env...)
				t.Logf("output:\n%s", out)
				if code != 0 || !strings.Contains(out, "tools: done") {
					t.Fatalf("%s failed in the sandbox: exit %d", tc.name, code)
				}
			})
		}
	})
}

func TestEgressThroughTheProxyOnly(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s", r.URL.Path)
		}))
		defer srv.Close()
		upstream := strings.TrimPrefix(srv.URL, "http://")
		proxy, err := egress.New([]string{upstream})
		if err != nil {
			t.Fatal(err)
		}
		const port = 3128
		f.policy.ProxyPort = port
		tmp, err := os.MkdirTemp("", "corral-private-tmp-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		f.policy.TmpDir = tmp
		exe, _ := os.Executable()
		env := append(slices.Clone(f.env), probeEnv+"=proxy")
		// NO_PROXY names the run's own loopback; the test's upstream is on
		// the host's loopback, so the probe's curl must not see it.
		for _, kv := range egress.Env(fmt.Sprintf("127.0.0.1:%d", port)) {
			if !strings.HasPrefix(strings.ToUpper(kv), "NO_PROXY=") {
				env = append(env, kv)
			}
		}
		run, err := sandboxtest.Start(sandboxtest.Config{Policy: f.policy, Args: []string{exe, fmt.Sprintf("127.0.0.1:%d", port), upstream, upstream}, Env: env}, &testWriter{t: t}, &testWriter{t: t})
		if err != nil {
			t.Fatal(err)
		}
		if run.Proxy() == nil {
			t.Fatal("no proxy listener from Prepare")
		}
		served := make(chan error, 1)
		go func() { served <- proxy.Serve(run.Proxy()) }()
		code, err := run.Wait()
		proxy.Close()
		if err := <-served; err != nil {
			t.Errorf("proxy: %v", err)
		}
		if err != nil || code != 0 {
			t.Fatalf("probe proxy: exit %d, %v", code, err)
		}
		if got, want := proxy.Denied(), []string{"denied.example:80", "denied.example:443"}; !slices.Equal(got, want) {
			t.Fatalf("denied hosts %q, want %q", got, want)
		}
	})
}

// goBuildCache returns this user's Go build cache, if it has one.
func goBuildCache() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	dir, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// testWriter sends what it is given to t.Log, line by line.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
