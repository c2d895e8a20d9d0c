package proc_test

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestInitDropsTheSignalsItsCommandSendsIt: only corral ends a run's init.
// A command that sends its parent, the init, every signal whose default
// would end or stop a process (a shell's `kill $PPID`) runs on: the native init,
// the Go init of a plain run and the Go init that builds a sandbox (pid 1
// of its namespace; on the host's network, where no Landlock scope keeps
// the command from trying) drop them. The Go init catches them beside its set-up
// and forks no command before all are caught.
func TestInitDropsTheSignalsItsCommandSendsIt(t *testing.T) {
	testutil.CheckFDs(t)
	const script = `for s in TERM INT HUP QUIT USR1 USR2 PIPE ALRM TTIN TTOU; do kill -$s $PPID || exit 9; done; sleep 0.2; echo alive`
	cases := []struct {
		name string
		spec func(t *testing.T) *proc.Spec
	}{
		{"native", func(t *testing.T) *proc.Spec {
			return &proc.Spec{Containment: corral.ContainmentSubreaper}
		}},
		{"go", func(t *testing.T) *proc.Spec {
			shim.UseGoInitOnly(true)
			proc.ForgetStarts()
			t.Cleanup(func() {
				shim.UseGoInitOnly(false)
				proc.ForgetStarts()
			})
			return &proc.Spec{Containment: corral.ContainmentSubreaper}
		}},
		{"sandbox", func(t *testing.T) *proc.Spec {
			needSandbox(t)
			// The host's network: no Landlock scope keeps the command
			// from signalling its init.
			return &proc.Spec{Dir: workspace(t), Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace, Network: corral.NetworkHost}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tag := testutil.Tag(t)
			spec := c.spec(t)
			spec.Args = []string{"sh", "-c", script}
			spec.Env = []string{testutil.TagEnvVar(tag)}
			spec.Timeout = 10 * time.Second
			res, err := proc.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout.Text() != "alive\n" || res.ExitCode != 0 {
				t.Fatalf("stdout %q, stderr %q (%s): the init did not outlive its command's signals", res.Stdout.Text(), res.Stderr.Text(), res.Status())
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
		})
	}
}

// TestSandboxInitGoesOnceItsRunIsOver: a sandbox's init serves one run.
// Once its command has exited and nothing of its tree is left, it exits
// by itself, taking its namespaces down while corral ends the run, rather
// than wait for corral to tell it to (shim.Config.OneShot).
func TestSandboxInitGoesOnceItsRunIsOver(t *testing.T) {
	needSandbox(t)
	// Both inits: the native one holds sandboxes where it can, the Go one
	// an enclosure's, another user's, and every sandbox elsewhere.
	defer func() {
		shim.UseGoInitOnly(false)
		proc.ForgetStarts()
	}()
	for _, goInit := range []bool{false, true} {
		t.Run(map[bool]string{false: "native init", true: "Go init"}[goInit], func(t *testing.T) {
			shim.UseGoInitOnly(goInit)
			proc.ForgetStarts()
			testutil.CheckFDs(t)
			var went []bool
			defer proc.WatchInitsExiting(10*time.Second, func(b bool) { went = append(went, b) })()
			tag := testutil.Tag(t)
			res, err := proc.Run(context.Background(), &proc.Spec{
				Args:    []string{"sh", "-c", "echo ran"},
				Env:     []string{testutil.TagEnvVar(tag)},
				Dir:     workspace(t),
				Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout.Text() != "ran\n" || res.ExitCode != 0 {
				t.Fatalf("stdout %q (%s)", res.Stdout.Text(), res.Status())
			}
			if len(went) != 1 || !went[0] {
				t.Fatalf("the sandbox's init had not exited by itself 10 s after its run was over (%v)", went)
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
		})
	}
}

// TestSandboxTierIsItsNamespaceUnlessACgroupIsNeeded: a sandboxed run is
// held by its pid namespace; only limits (where the machine has the
// cgroup tier) or the cgroup tier asked for put it in a cgroup leaf too,
// where its limits apply.
func TestSandboxTierIsItsNamespaceUnlessACgroupIsNeeded(t *testing.T) {
	needSandbox(t)
	cases := []struct {
		name   string
		tier   corral.Containment
		limits proc.Limits
		want   corral.Containment
	}{
		{"plain", corral.ContainmentAuto, proc.Limits{}, corral.ContainmentPidNamespace},
		{"subreaper asked", corral.ContainmentSubreaper, proc.Limits{}, corral.ContainmentPidNamespace},
		{"limits", corral.ContainmentAuto, proc.Limits{Pids: 64}, corral.ContainmentCgroup},
		{"cgroup asked", corral.ContainmentCgroup, proc.Limits{}, corral.ContainmentCgroup},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == corral.ContainmentCgroup {
				if _, err := cgroup.Detect(); err != nil {
					t.Skipf("SKIP: no cgroup tier here: %v", err)
				}
			}
			res, err := proc.Run(context.Background(), &proc.Spec{
				Args:        []string{"true"},
				Dir:         workspace(t),
				Sandbox:     corral.Sandbox{Mode: corral.SandboxWorkspace},
				Containment: c.tier,
				Limits:      c.limits,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Containment != c.want || res.ExitCode != 0 {
				t.Fatalf("held by %s (%s), want %s; limits: %q", res.Containment, res.Status(), c.want, res.LimitsNote)
			}
		})
	}
}
