package sandbox_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/sandbox/sandboxtest"
)

const (
	// probeEnv names the probe the test binary runs when it is started
	// inside the sandbox.
	probeEnv = "CORRAL_SANDBOX_PROBE"
	// nobodyEnv marks a copy of the test binary running as nobody.
	nobodyEnv = "CORRAL_SANDBOX_TEST_NOBODY"
	// hostDirEnv names a directory outside /tmp where tests may create the
	// host files the sandbox sees but must not write.
	hostDirEnv = "CORRAL_SANDBOX_TEST_HOST_DIR"
)

func TestMain(m *testing.M) {
	sandboxtest.Main()
	if name := os.Getenv(probeEnv); name != "" {
		os.Exit(runProbe(name, os.Args[1:]))
	}
	code := m.Run()
	if nobody.base != "" {
		os.RemoveAll(nobody.base)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// needSandbox skips t when this machine cannot build the sandbox.
func needSandbox(t *testing.T) sandbox.Support {
	t.Helper()
	s, err := sandbox.Probe()
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	return s
}

// forEachUser runs f as the user running the tests and, when that is
// root, again as nobody: a copy of the test binary runs only the nobody
// subtest, as uid and gid 65534, so that the sandbox is built without any
// privilege.
func forEachUser(t *testing.T, f func(t *testing.T)) {
	if os.Getenv(nobodyEnv) == "1" {
		t.Run("nobody", f)
		return
	}
	self := "root"
	if os.Getuid() != 0 {
		self = "user"
	}
	t.Run(self, f)
	t.Run("nobody", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("SKIP: dropping to nobody needs root; the unprivileged cases ran as this user above")
		}
		runAsNobody(t)
	})
}

// nobody is the directory, outside /tmp, holding the copy of the test
// binary that nobody can read and execute, and nobody's own host
// directory.
var nobody struct {
	once sync.Once
	base string
	err  error
}

func nobodyBase() (string, error) {
	nobody.once.Do(func() {
		parent, err := hostParent()
		if err != nil {
			nobody.err = err
			return
		}
		base, err := os.MkdirTemp(parent, "corral-sandbox-nobody-")
		if err != nil {
			nobody.err = err
			return
		}
		nobody.base = base
		exe, _ := os.Executable()
		b, err := os.ReadFile(exe)
		if err == nil {
			err = os.WriteFile(filepath.Join(base, "sandbox.test"), b, 0o755)
		}
		if err == nil {
			err = os.Mkdir(filepath.Join(base, "host"), 0o755)
		}
		if err == nil {
			err = os.Chown(filepath.Join(base, "host"), 65534, 65534)
		}
		if err == nil {
			err = os.Chmod(base, 0o755)
		}
		nobody.err = err
	})
	return nobody.base, nobody.err
}

func runAsNobody(t *testing.T) {
	base, err := nobodyBase()
	if err != nil {
		t.Fatalf("prepare the nobody run: %v", err)
	}
	name, _, _ := strings.Cut(t.Name(), "/")
	cmd := exec.Command(filepath.Join(base, "sandbox.test"), "-test.run", "^"+name+"$/^nobody$", "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = base
	cmd.Env = []string{nobodyEnv + "=1", hostDirEnv + "=" + filepath.Join(base, "host"), "PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("as nobody:\n%s", out.String())
	if err != nil {
		t.Fatalf("as nobody: %v", err)
	}
	text := out.String()
	if strings.Contains(text, "--- SKIP: "+name+"/nobody ") {
		t.Skipf("SKIP: as nobody: %s", skipReason(text, name+"/nobody"))
	}
	if !strings.Contains(text, "--- PASS: "+name+"/nobody ") {
		t.Fatalf("as nobody: %s/nobody did not run", name)
	}
	// What the copy skipped is skipped here too, with its reason, not
	// hidden in a log.
	for _, sub := range skippedBelow(text, name+"/nobody/") {
		t.Run(sub, func(t *testing.T) {
			t.Skipf("SKIP: as nobody: %s", skipReason(text, name+"/nobody/"+sub))
		})
	}
}

// skippedBelow returns the subtests below prefix that a verbose test
// output reports skipped, as names relative to prefix.
func skippedBelow(out, prefix string) []string {
	var subs []string
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--- SKIP: "+prefix)
		if !ok {
			continue
		}
		if sub, _, ok := strings.Cut(rest, " "); ok && sub != "" {
			subs = append(subs, sub)
		}
	}
	return subs
}

// skipReason returns the reason a verbose test output gives for the skip
// of test: the "SKIP: reason" it logged while it ran, without "SKIP: ".
func skipReason(out, test string) string {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) != "=== RUN   "+test {
			continue
		}
		for _, l := range lines[i+1:] {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
				break
			}
			if _, reason, ok := strings.Cut(l, "SKIP: "); ok {
				return strings.TrimSpace(reason)
			}
		}
	}
	return "no reason given (see its output)"
}

// hostParent returns a directory outside /tmp and /var/tmp in which this
// user may create directories that stay visible inside the sandbox.
func hostParent() (string, error) {
	candidates := []string{os.Getenv(hostDirEnv)}
	if os.Getuid() == 0 {
		candidates = append(candidates, "/run", "/var/lib")
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, home)
	}
	for _, c := range candidates {
		if c == "" || !filepath.IsAbs(c) || strings.HasPrefix(c, "/tmp") || strings.HasPrefix(c, "/var/tmp") {
			continue
		}
		if d, err := os.MkdirTemp(c, ".corral-probe-"); err == nil {
			os.Remove(d)
			return c, nil
		}
	}
	return "", fmt.Errorf("no writable directory outside /tmp and /var/tmp: set %s", hostDirEnv)
}

// hostDir returns a new directory outside /tmp, visible (read-only) in the
// sandbox, writable on the host; it is removed when t ends.
func hostDir(t *testing.T) string {
	t.Helper()
	parent, err := hostParent()
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	d, err := os.MkdirTemp(parent, "corral-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ = filepath.EvalSymlinks(d)
	return d
}

// fixture is the surroundings of a test's sandboxed runs: a workspace
// under /tmp (the harder case: it must be put back into the private /tmp),
// a host directory outside /tmp, and the policy, whose private /tmp each
// run makes anew.
type fixture struct {
	t      *testing.T
	ws     string
	host   string
	policy *sandbox.Policy
	env    []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	needSandbox(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return &fixture{
		t:      t,
		ws:     ws,
		host:   hostDir(t),
		policy: &sandbox.Policy{Mode: corral.SandboxWorkspace, Workdir: ws},
		env:    []string{"PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + ws, "LANG=C.UTF-8"},
	}
}

// hostPath creates a directory (dir) or a file with content under the
// host directory and returns its path.
func (f *fixture) hostPath(name string, dir bool, content string) string {
	f.t.Helper()
	p := filepath.Join(f.host, name)
	var err error
	if dir {
		err = os.MkdirAll(p, 0o755)
	} else {
		err = os.WriteFile(p, []byte(content), 0o644)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// run runs args in the sandbox and returns the exit code, the output and
// the init's status.
func (f *fixture) run(args []string, env ...string) (int, string, sandboxtest.Status) {
	f.t.Helper()
	// Each sandbox gets a new private /tmp, as corral makes one.
	tmp, err := os.MkdirTemp("", "corral-private-tmp-")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { os.RemoveAll(tmp) })
	f.policy.TmpDir = tmp
	var out bytes.Buffer
	w := io.MultiWriter(&out)
	start := time.Now()
	code, st, err := sandboxtest.Run(sandboxtest.Config{Policy: f.policy, Args: args, Env: append(f.env, env...)}, w, w)
	if err != nil {
		f.t.Fatalf("sandboxed run of %q: %v\n%s", args, err, out.String())
	}
	what := fmt.Sprintf("%q", args)
	if len(what) > 100 {
		what = what[:100] + "..."
	}
	f.t.Logf("%s: exit %d in %v, mechanisms %v, Landlock ABI %d", what, code, time.Since(start).Round(time.Millisecond), st.Mechanisms, st.LandlockABI)
	return code, out.String(), st
}

// probe runs the named probe of this test binary in the sandbox and fails
// the test unless every check of the probe held.
func (f *fixture) probe(name string, args ...string) string {
	f.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		f.t.Fatal(err)
	}
	code, out, _ := f.run(append([]string{exe}, args...), probeEnv+"="+name)
	f.t.Logf("probe %s:\n%s", name, out)
	if code != 0 {
		f.t.Fatalf("probe %s failed (exit %d): see the FAIL lines above", name, code)
	}
	return out
}
