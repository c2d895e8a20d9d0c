package proc_test

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

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
	tag := testutil.Tag(t)
	t.Cleanup(func() { testutil.AssertNoTagged(t, tag, 10*time.Second) })
	direct := func(t *testing.T) string {
		t.Helper()
		c := exec.Command(dispositions[0], dispositions[1:]...)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("os/exec %v: %v", dispositions, err)
		}
		return string(out)
	}
	specs := map[string]proc.Spec{}
	for _, tier := range tiers(t) {
		specs[string(tier)] = proc.Spec{Containment: tier}
	}
	if sandboxProblem(t) == nil {
		specs["sandbox"] = proc.Spec{Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}}
	}
	check := func(t *testing.T, phase string) {
		t.Helper()
		want := direct(t)
		for name, base := range specs {
			// Three runs each, one after another: the later ones take the
			// init the first left idle.
			for range 3 {
				spec := base
				spec.Args = dispositions
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
	}
	check(t, "nothing ignored")
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
	check(t, "SIGUSR2 and SIGWINCH ignored")
	unignore()
	if signal.Ignored(unix.SIGUSR2) || signal.Ignored(unix.SIGWINCH) {
		t.Fatal("the test process still ignores SIGUSR2 or SIGWINCH")
	}
	check(t, "ignored no longer")
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
	check(t, "SIGHUP ignored again by os/signal's Stop")
}
