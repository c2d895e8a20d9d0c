package proc_test

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// startsLikeADirectChild checks that argv, a command that prints what it
// reads of its own state, prints the same started by proc on the tiers
// given (every tier this machine has when none is), and in a sandbox when
// sandbox, as started by os/exec from this process now. Three runs each,
// one after another: the later ones take the init the first left idle.
func startsLikeADirectChild(t *testing.T, phase string, argv []string, sandbox bool, only ...corral.Containment) {
	t.Helper()
	tag := testutil.Tag(t)
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: os/exec %v: %v", phase, argv, err)
	}
	want := string(out)
	specs := map[string]proc.Spec{}
	if len(only) == 0 {
		only = tiers(t)
	}
	for _, tier := range only {
		specs[string(tier)] = proc.Spec{Containment: tier}
	}
	if sandbox && sandboxProblem(t) == nil {
		// Both inits of a sandbox: the native one, and the Go one (which
		// holds a guard's and an enclosure's, and serves a native init's gate).
		specs["sandbox"] = proc.Spec{Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}}
		specs[goInitSandbox] = proc.Spec{Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}}
		defer shim.UseGoInitOnly(false)
	}
	for name, base := range specs {
		shim.UseGoInitOnly(name == goInitSandbox)
		for range 3 {
			spec := base
			spec.Args = argv
			spec.Env = []string{testutil.TagEnvVar(tag)}
			// An init that no longer reaps would hold the run: bounded.
			spec.Timeout = 30 * time.Second
			res, err := proc.Run(context.Background(), &spec)
			if err != nil {
				t.Fatalf("%s, %s: %v", phase, name, err)
			}
			if got := res.Stdout.Text(); got != want || !res.Success() {
				t.Fatalf("%s, %s: the command started with\n%s(%s), a direct child with\n%s", phase, name, got, res.Status(), want)
			}
		}
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// goInitSandbox names the sandboxed runs startsLikeADirectChild makes
// through the Go init.
const goInitSandbox = "sandbox, Go init"

// dispositions is what a command reads of its own signal state: the
// signals it starts with ignored and blocked.
var dispositions = []string{"grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"}

// TestCommandsStartWithTheSignalsADirectChildWould proves that a command
// started through an init (the subreaper and process-group tiers, and a
// sandbox's) starts with the signal dispositions and mask a direct child
// of the supervisor gets (os/exec's, read in the same state): nothing
// blocked; ignored only what the supervisor ignores; and, once the
// supervisor stops ignoring a signal, no longer ignored in the next
// command, which an init kept from an earlier run starts. An init drops
// the signals a command may send it (SIGTERM among them), and must not
// hand that on: a command that inherited SIGTERM ignored would outlive
// every stop signal. Go's own corner (a SIGHUP once ignored is ignored
// again when the last Notify of it stops, which signal.Ignored does not
// say) is read from the kernel, as a direct child inherits it.
func TestCommandsStartWithTheSignalsADirectChildWould(t *testing.T) {
	testutil.CheckFDs(t)
	check := func(phase string) { startsLikeADirectChild(t, phase, dispositions, true) }
	check("nothing ignored")
	// Ignored by the supervisor: a signal an init drops itself (SIGUSR2)
	// and one it leaves alone (SIGWINCH). Not SIGHUP: Go undoes an
	// Ignore of SIGHUP or SIGINT by ignoring it again.
	signal.Ignore(unix.SIGUSR2, unix.SIGWINCH)
	unignore := func() {
		// What undoes Ignore in Go (Reset does not): a handler, then none.
		c := make(chan os.Signal, 1)
		signal.Notify(c, unix.SIGUSR2, unix.SIGWINCH)
		signal.Stop(c)
	}
	t.Cleanup(unignore)
	check("SIGUSR2 and SIGWINCH ignored")
	unignore()
	if signal.Ignored(unix.SIGUSR2) || signal.Ignored(unix.SIGWINCH) {
		t.Fatal("the test process still ignores SIGUSR2 or SIGWINCH")
	}
	check("ignored no longer")
	// SIGHUP ignored, as under nohup, then caught for a while and let go
	// (signal.NotifyContext's stop): os/signal gives it back to the kernel
	// ignored, and says it is not; a direct child starts with it ignored.
	signal.Ignore(unix.SIGHUP)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, unix.SIGHUP)
	signal.Stop(hup)
	// Caught again once the test is done (and dropped): the kernel's
	// SIG_IGN would otherwise stay for every later test's children.
	t.Cleanup(func() { signal.Notify(make(chan os.Signal, 1), unix.SIGHUP) })
	check("SIGHUP ignored again by os/signal's Stop")
}

// processState is what a command reads of the process state it inherits:
// its file mode creation mask, its resource limits and its OOM score
// adjustment.
var processState = []string{"sh", "-c", "grep '^Umask:' /proc/self/status; cat /proc/self/limits /proc/self/oom_score_adj"}

// TestCommandsStartWithTheProcessStateADirectChildWould proves that a
// command started through an init starts with the umask, resource limits
// and OOM score adjustment a direct child of the supervisor gets, also
// after the supervisor changed them while idle inits of its earlier runs
// waited in the pool (a service that sets its umask after its first runs):
// those inits inherited the old state, and must not serve.
func TestCommandsStartWithTheProcessStateADirectChildWould(t *testing.T) {
	testutil.CheckFDs(t)
	check := func(phase string) { startsLikeADirectChild(t, phase, processState, false) }
	check("as started")
	old := syscall.Umask(0o027)
	t.Cleanup(func() { syscall.Umask(old) })
	var core syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &core); err != nil {
		t.Fatal(err)
	}
	changed := core
	changed.Cur = 4 << 20
	if changed.Cur == core.Cur || changed.Cur > core.Max {
		changed.Cur = 0
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &changed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_CORE, &core) })
	what := "umask and RLIMIT_CORE changed"
	if os.Geteuid() == 0 {
		// Lowering it back takes privilege: only as root.
		b, err := os.ReadFile("/proc/self/oom_score_adj")
		if err != nil {
			t.Fatal(err)
		}
		adj, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		next := adj + 1
		if next > 1000 {
			next = adj - 1
		}
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(next)), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(adj)), 0) })
		what = "umask, RLIMIT_CORE and oom_score_adj changed"
	}
	check(what)
}

// credState is what a command reads of the user it runs as: its ids,
// groups and capabilities, and no_new_privs.
var credState = []string{"grep", "-E", "^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):", "/proc/self/status"}

// credChangeEnv makes the test binary, run again by
// TestCommandsStartAsTheUserTheSupervisorIsNow, be the supervisor that
// drops root after its first run.
const credChangeEnv = "CORRAL_TEST_DROPS_ROOT"

// TestCommandsStartAsTheUserTheSupervisorIsNow proves that a supervisor
// that drops root (to nobody, for good, as a service does once it is set
// up) after a run whose init waits idle in the pool starts its next
// commands as nobody, as a direct child of it would be: not from the idle
// init, which is still root. It runs in a copy of the test binary, which
// may lose root; the subreaper and process-group tiers (nobody has no
// cgroup of its own).
func TestCommandsStartAsTheUserTheSupervisorIsNow(t *testing.T) {
	if os.Getenv(credChangeEnv) != "" {
		dropRootBetweenRuns(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: dropping root needs root; run the tests as root (CI does)")
	}
	if _, err := user.Lookup("nobody"); err != nil {
		t.Skip("SKIP: dropping root needs the user nobody")
	}
	// A copy nobody may execute, for the inits it starts once it is nobody.
	cmd := exec.Command(testutil.ExecutableCopy(t), "-test.run", "^TestCommandsStartAsTheUserTheSupervisorIsNow$", "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), credChangeEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandsStartAsTheUserTheSupervisorIsNow") {
		t.Fatalf("the supervisor that drops root (%v):\n%s", err, out)
	}
}

// dropRootBetweenRuns is the supervisor of
// TestCommandsStartAsTheUserTheSupervisorIsNow.
func dropRootBetweenRuns(t *testing.T) {
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	inits := []corral.Containment{corral.ContainmentSubreaper, corral.ContainmentProcessGroup}
	startsLikeADirectChild(t, "as root", credState, false, inits...)
	if err := syscall.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgid(gid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(uid); err != nil {
		t.Fatal(err)
	}
	startsLikeADirectChild(t, "root dropped for nobody", credState, false, inits...)
}
