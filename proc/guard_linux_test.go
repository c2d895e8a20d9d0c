package proc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// needGuard skips t, saying why, when this machine cannot build the task
// guard.
func needGuard(t *testing.T) {
	t.Helper()
	if err := proc.ProbeGuard(); err != nil {
		t.Skipf("SKIP: %v", err)
	}
}

// guardedRun runs script under bash with the guard hiding hide, in dir,
// and returns its result and combined output.
func guardedRun(t *testing.T, dir, script string, hide ...string) (*proc.Result, string) {
	t.Helper()
	tag := testutil.Tag(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := proc.Run(ctx, &proc.Spec{
		Args:    []string{"bash", "-c", script},
		Dir:     dir,
		EnvMode: corral.EnvClean,
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", testutil.TagEnvVar(tag), "SUP=" + strconv.Itoa(os.Getpid())},
		Guard:   &proc.Guard{Hide: hide},
		Timeout: 50 * time.Second,
	})
	if err != nil {
		t.Fatalf("guarded run: %v", err)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
	return res, res.Stdout.Text() + res.Stderr.Text()
}

// guardProbe tries every way a command has to its supervisor's secrets;
// each line says what it got. $SUP is the supervisor's pid, $SECRET the
// hidden directory, $ALIAS the same directory through a bind mount.
const guardProbe = `
echo "uid $(id -u)"
echo "procs $(ls -d /proc/[0-9]* | wc -l)"
cat /proc/$SUP/environ /proc/$SUP/cmdline /proc/$PPID/environ 2>/dev/null && echo "READ-SUPERVISOR"
kill -0 $SUP 2>/dev/null && echo "SIGNALLED-SUPERVISOR"
cat "$SECRET/token" 2>/dev/null; ls -A "$SECRET"
[ -n "$ALIAS" ] && { cat "$ALIAS/token" 2>/dev/null; ls -A "$ALIAS"; }
echo "devices $(ls /dev | tr '\n' ' ')"
find / -xdev -maxdepth 3 -type b 2>/dev/null | head -3
grep -E '^(CapBnd|CapEff|NoNewPrivs)' /proc/self/status
# Opened for writing, nothing written: a write would have gone through.
: >> /proc/sys/kernel/core_pattern 2>/dev/null && echo "WROTE-SYSCTL"
: >> /proc/sysrq-trigger 2>/dev/null && echo "WROTE-SYSRQ"
for f in /sys/kernel/uevent_helper /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/release_agent /sys/fs/cgroup/*/cgroup.procs; do
	[ -e "$f" ] && : >> "$f" 2>/dev/null && echo "WROTE-KERNEL $f"
done
ls -A /sys/kernel/tracing /sys/kernel/debug 2>/dev/null | head -3
umount "$SECRET" 2>/dev/null && echo "UNMOUNTED"
mkdir -p ./m && mount -t tmpfs none ./m 2>/dev/null && echo "MOUNTED" && umount ./m
unshare -U -r -m sh -c 'umount "$SECRET" && cat "$SECRET/token"' 2>/dev/null && echo "UNSHARED"
unshare -U -r -m sh -c 'umount /proc/sys || mount -o remount,rw /proc/sys' 2>/dev/null && echo "UNDID-PROC-SYS"
unshare -U -r true 2>/dev/null && echo "nested user namespace"
unshare -U -r -p -f --mount-proc sh -c '(: >> /proc/sys/kernel/core_pattern) && echo WROTE-NESTED-SYSCTL; echo nested proc' 2>/dev/null
echo work > ./written && echo "wrote workdir"
echo done
`

// TestGuardKeepsTheRunFromItsSupervisorsSecrets: a guarded command (as
// root, and as nobody in the unprivileged rerun) cannot see its supervisor
// in /proc nor signal it, finds the hidden directory empty there and
// through a bind mount of it, has only the harmless devices, cannot write
// the kernel's settings nor undo the hiding (umount, mount, a user
// namespace of its own, a proc of its own), and still writes its working
// directory and makes a user namespace of its own.
func TestGuardKeepsTheRunFromItsSupervisorsSecrets(t *testing.T) {
	needGuard(t)
	const token = "guard-test-token-7f3a91"
	base := t.TempDir()
	os.Chmod(base, 0o755)
	secret := filepath.Join(base, "secret")
	work := filepath.Join(base, "work")
	for _, d := range []string{secret, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "token"), []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := ""
	if os.Geteuid() == 0 {
		// The same directory at a second path, as a bind mount of the
		// host's would show it.
		alias = filepath.Join(base, "alias")
		os.Mkdir(alias, 0o755)
		if err := unix.Mount(secret, alias, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind mount: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(alias, unix.MNT_DETACH) })
	}
	script := fmt.Sprintf("SECRET=%q ALIAS=%q\n%s", secret, alias, guardProbe)
	res, out := guardedRun(t, work, script, secret)
	if strings.Contains(out, token) {
		t.Errorf("the guarded command read the hidden token:\n%s", out)
	}
	for _, bad := range []string{"READ-SUPERVISOR", "SIGNALLED-SUPERVISOR", "WROTE-SYSCTL", "WROTE-SYSRQ", "WROTE-KERNEL", "UNMOUNTED", "MOUNTED", "UNSHARED", "UNDID-PROC-SYS", "WROTE-NESTED-SYSCTL", "token\n", "vda", "sda", "nvme", "mem "} {
		if strings.Contains(out, bad) {
			t.Errorf("the guarded command got %q:\n%s", bad, out)
		}
	}
	// A user namespace of its own works (nested sandboxes need one); a
	// proc of its own only for a run that is not root, whose writes to it
	// the kernel refuses anyway.
	if !strings.Contains(out, "nested user namespace") || strings.Contains(out, "nested proc") == (os.Geteuid() == 0) {
		t.Errorf("nested namespaces (as uid %d):\n%s", os.Geteuid(), out)
	}
	if !strings.Contains(out, "wrote workdir") || !strings.Contains(out, "done") {
		t.Errorf("the guarded command did not do its ordinary work:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(work, "written")); err != nil || string(b) != "work\n" {
		t.Errorf("the working directory was not written: %q %v", b, err)
	}
	if !strings.Contains(out, "NoNewPrivs:\t1") {
		t.Errorf("no_new_privs not set:\n%s", out)
	}
	wantBnd := "0000000000000000"
	if os.Geteuid() == 0 {
		// A container engine's default set (00000000a80425fb) less
		// CAP_MKNOD and CAP_NET_RAW.
		wantBnd = "00000000a00405fb"
	}
	if !strings.Contains(out, "CapBnd:\t"+wantBnd) {
		t.Errorf("bounding set: want %s:\n%s", wantBnd, out)
	}
	if n := procCount(out); n < 1 || n > 6 {
		t.Errorf("the command sees %d processes, want only its own few:\n%s", n, out)
	}
	g := res.Guard
	if !g.Guarded() || g.Hidden[0] != secret || res.Sandbox != nil || res.Binding != proc.BindingPidNamespace {
		t.Errorf("the result's report: guard %+v, sandbox %+v, binding %q", g, res.Sandbox, res.Binding)
	}
	for _, m := range []string{"pid namespace", "mount namespace", "own /proc", "private /dev", "hidden paths", "no_new_privs"} {
		if !strings.Contains(strings.Join(g.Mechanisms, ","), m) {
			t.Errorf("mechanisms %v lack %q", g.Mechanisms, m)
		}
	}
	if (len(g.Capabilities) > 0) != (os.Geteuid() == 0) {
		t.Errorf("capabilities kept: %v", g.Capabilities)
	}
}

func procCount(out string) int {
	for _, line := range strings.Split(out, "\n") {
		if n, ok := strings.CutPrefix(line, "procs "); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(n))
			return v
		}
	}
	return -1
}

// A sandboxed run with a guard denies the guard's paths; the report says
// the sandbox did the guard's work.
func TestGuardUnderASandboxDeniesItsPaths(t *testing.T) {
	needSandbox(t)
	secret := t.TempDir()
	os.WriteFile(filepath.Join(secret, "token"), []byte("sandboxed-secret-1c2d"), 0o644)
	ws := workspace(t)
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"sh", "-c", "cat " + secret + "/token; echo end"},
		Dir:     ws,
		Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
		Guard:   &proc.Guard{Hide: []string{secret}},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout.Text() + res.Stderr.Text()
	if strings.Contains(out, "sandboxed-secret") || !strings.Contains(out, "end") {
		t.Errorf("output:\n%s", out)
	}
	if res.Sandbox == nil || !res.Guard.Guarded() || res.Guard.Mechanisms[0] != "sandbox" || res.Guard.Hidden[0] != secret {
		t.Errorf("reports: sandbox %+v guard %+v", res.Sandbox, res.Guard)
	}
}

func TestGuardRefusesAnEnclosureAndRelativePaths(t *testing.T) {
	_, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"true"}, Guard: &proc.Guard{Hide: []string{"rel"}}})
	if err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("a relative hidden path: %v", err)
	}
	if errors.Is(proc.ProbeGuard(), proc.ErrGuardUnavailable) {
		t.Log("the guard is unavailable here:", proc.ProbeGuard())
	}
}

// The guard built without privilege: the same probes as nobody, whose
// init needs a user namespace of its own.
func TestGuardAsNobody(t *testing.T) {
	if testutil.AsNobody() {
		t.Skip("SKIP: this is the unprivileged run already")
	}
	needGuard(t)
	testutil.RunAsNobody(t, "^(TestGuardKeepsTheRunFromItsSupervisorsSecrets|TestGuardUnderASandboxDeniesItsPaths)$")
}
