package proc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// supervisorEnv makes the test binary act as a supervisor that starts a
// tree, prints its handle and the pid of its guardian (0 if none), and
// waits to be killed. Its value is the tier, followed by ",sandbox" or
// ",enclosure" for a sandboxed run, ",goguardian" for a plain run guarded
// by the Go guardian where the native one would run, ",bigtree" for
// bigTreeScript's tree, ",exit" or ",detach" (see exitingSupervisor,
// detachingSupervisor).
const supervisorEnv = "CORRAL_PROC_TEST_SUPERVISOR"

// supervisorScript leaves a background job, a setsid escapee, a double
// fork and a daemon that clears its environment (tagged in its argv).
const supervisorScript = `sleep 600 & setsid sleep 600 & (sleep 600 &); setsid -f env -i bash -c 'exec 0<&- 1>&- 2>&-; (exec -a TAG-daemon sleep 600 &)'; echo up; sleep 600`

// bigTreeScript is a shell that starts 4,200 sleeps in the background
// and becomes a Python program that starts 300 threads besides its main
// one, each with a child (a copy of it that sleeps): one process whose
// main thread has 4,200 children and 300 threads with one each, 4,501
// processes in all, up once it prints "up".
const bigTreeScript = `i=0; while [ $i -lt 4200 ]; do sleep 600 & i=$((i+1)); done; exec python3 -c '
import os, threading, time, warnings
warnings.simplefilter("ignore")
def hold():
    while True:
        time.sleep(600)
ready = threading.Barrier(301)
def thread():
    if os.fork() == 0:
        hold()
    ready.wait()
    hold()
for _ in range(300):
    threading.Thread(target=thread, daemon=True).start()
ready.wait()
print("up", flush=True)
hold()
'`

// bigTreeSize is how many processes bigTreeScript makes.
const bigTreeSize = 1 + 300 + 4200

// supervised is what a test supervisor prints.
type supervised struct {
	Handle         proc.Handle `json:"handle"`
	Guardian       int         `json:"guardian"`
	NativeGuardian bool        `json:"native_guardian"`
	Detached       int         `json:"detached"`
	BindingNote    string      `json:"binding_note"`
}

func init() {
	v := os.Getenv(supervisorEnv)
	if v == "" {
		return
	}
	tier, variant, _ := strings.Cut(v, ",")
	tag := os.Getenv(testutil.TagEnv)
	switch variant {
	case "exit":
		exitingSupervisor(tier)
	case "detach", "detach-goguardian":
		if variant == "detach-goguardian" {
			shim.UseGoGuardianOnly()
		}
		detachingSupervisor(tier, tag)
	case "goguardian":
		shim.UseGoGuardianOnly()
	}
	spec := &proc.Spec{
		Args:        []string{"bash", "-c", strings.ReplaceAll(supervisorScript, "TAG", tag)},
		Env:         []string{testutil.TagEnvVar(tag)},
		Containment: corral.Containment(tier),
	}
	switch variant {
	case "bigtree":
		spec.Args = []string{"sh", "-c", bigTreeScript}
	case "sandbox":
		spec.Sandbox = corral.Sandbox{Mode: corral.SandboxReadOnly}
	case "enclosure":
		e, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		spec.Enclosure, spec.Containment = e, ""
	}
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for {
		if o, _ := p.Output(); o.Text() == "up\n" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	out := supervised{Handle: p.Handle()}
	out.Guardian, out.NativeGuardian = guardianNamed()
	json.NewEncoder(os.Stdout).Encode(out)
	select {}
}

// guardianNamed returns this process's guardian once it has named itself
// a shim (until then, killed, it would not be known as one), 0 when it
// has none.
func guardianNamed() (int, bool) {
	g, native := proc.Guardian()
	if g == 0 {
		return 0, false
	}
	for st, _ := procfs.ReadStat(g); st.Comm != shim.Comm; st, _ = procfs.ReadStat(g) {
		time.Sleep(time.Millisecond)
	}
	return g, native
}

// detachingSupervisor runs one run that leaves two processes (a setsid
// escapee and a double fork) and detaches them, prints its result and its
// guardian, and exits normally: its guardian then kills what is left in
// its cgroup directory, which the detached processes must not be in.
func detachingSupervisor(tier, tag string) {
	r, err := proc.Run(context.Background(), &proc.Spec{
		Args:        []string{"bash", "-c", "setsid sleep 600 & (sleep 600 &); echo up"},
		Env:         []string{testutil.TagEnvVar(tag)},
		Containment: corral.Containment(tier),
		Leftovers:   corral.LeftoversDetach,
		Drain:       -1,
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	out := supervised{Detached: r.Detached, BindingNote: r.BindingNote}
	out.Guardian, out.NativeGuardian = guardianNamed()
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// exitingSupervisor runs one plain run that ends by itself, prints its
// handle, and exits normally: its init, idle in the pool, outlives it.
func exitingSupervisor(tier string) {
	p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"true"}, Containment: corral.Containment(tier)})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	h := p.Handle()
	p.Wait()
	json.NewEncoder(os.Stdout).Encode(supervised{Handle: h})
	os.Exit(0)
}

// startSupervisor starts a test supervisor for tier (and variant) and
// returns it with what it printed once its tree is up.
func startSupervisor(t *testing.T, tag, how string) (*exec.Cmd, supervised) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), supervisorEnv+"="+how, testutil.TagEnvVar(tag))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("supervisor: %q %v", line, err)
	}
	var s supervised
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatal(err)
	}
	// Wait for the daemon to finish starting, so that all five are there:
	// five sleeps (the script's last command is its bash, executed). The
	// steps on the daemon's way (setsid, env, its bash) are tagged too, in
	// their arguments, and counting them could end the wait before the
	// daemon runs.
	want := map[string]int{"sleep": 5}
	if strings.HasSuffix(how, ",bigtree") {
		want = map[string]int{"sleep": bigTreeSize - 301, "python3": 301}
	}
	testutil.WaitFor(t, 20*time.Second, "the supervisor's tree to be up", func() bool {
		n := map[string]int{}
		for _, st := range testutil.Tagged(tag) {
			n[st.Comm]++
		}
		for comm, w := range want {
			if n[comm] < w {
				return false
			}
		}
		return true
	})
	return cmd, s
}

// TestReclaimKillsTheTreeOfADeadSupervisor: when a supervisor died and
// what binds its trees to it died too (its guardian, its run's init), a new
// supervisor reclaims the tree from the handle.
func TestReclaimKillsTheTreeOfADeadSupervisor(t *testing.T) {
	for _, tier := range tiers(t) {
		if tier == corral.ContainmentProcessGroup {
			continue // by design, a run of this tier holds no escapee that Reclaim could find
		}
		t.Run(string(tier), func(t *testing.T) {
			becomeSubreaper(t)
			tag := testutil.Tag(t)
			if tier != corral.ContainmentCgroup {
				// What the test reaps itself (below), reaped even if it
				// fails first, so that no later test finds the zombie.
				t.Cleanup(testutil.ReapZombies)
			}
			cmd, s := startSupervisor(t, tag, string(tier))
			h := s.Handle
			// The binding goes first, then the supervisor, neither with a
			// chance to clean up: the supervisor is stopped first, or it
			// could act on its init's death before its own (a loaded
			// machine once gave it the time).
			cmd.Process.Signal(unix.SIGSTOP)
			for _, pid := range []int{s.Guardian, h.Init} {
				if pid > 0 {
					unix.Kill(pid, unix.SIGKILL)
				}
			}
			kids, _ := procfs.Children(cmd.Process.Pid)
			cmd.Process.Kill()
			cmd.Wait()
			if n := len(testutil.Tagged(tag)); n < 5 {
				t.Fatalf("%d tagged processes alive before reclaim, want 5 (the binding killed them?)", n)
			}
			killed, err := proc.Reclaim(context.Background(), h)
			if err != nil {
				t.Fatalf("Reclaim: %v", err)
			}
			// The daemon left every tie to the run: only the cgroup tier
			// holds it.
			want := 4
			if tier == corral.ContainmentCgroup {
				want = 5
			}
			if killed < want {
				t.Errorf("Reclaim killed %d, want at least %d", killed, want)
			}
			if tier != corral.ContainmentCgroup {
				testutil.KillTagged(tag)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
			orphansReaped(t, kids)
			if tier != corral.ContainmentCgroup {
				// The daemon's parent exited after it left every tie: it
				// came to this process (a subreaper) as a zombie that no
				// rule of Reclaim attributes to the run. The test ends what
				// it killed itself.
				testutil.ReapZombies()
			}
			// Reclaiming again finds nothing and is not an error.
			if n, err := proc.Reclaim(context.Background(), h); err != nil || n != 0 {
				t.Fatalf("second Reclaim: %d %v", n, err)
			}
		})
	}
}

// orphansReaped waits for kids, the children of a dead supervisor (its
// guardian, its runs' inits), to finish their work, die and be reaped by
// corral in this process, which they were handed to: it is a subreaper, as
// every supervisor of the cgroup or subreaper tier is. The test reaps
// nothing itself: a zombie left here is corral's failure.
func orphansReaped(t *testing.T, kids []int) {
	t.Helper()
	left := func() []procfs.Stat {
		var out []procfs.Stat
		for _, k := range kids {
			if st, err := procfs.ReadStat(k); err == nil {
				out = append(out, st)
			}
		}
		return out
	}
	if !testutil.Eventually(10*time.Second, func() bool { return len(left()) == 0 }) {
		t.Errorf("the dead supervisor's children are still here (zombies are corral's to reap): %v", left())
		testutil.ReapZombies()
	}
}

// becomeSubreaper makes the test process a subreaper, as a supervisor of
// the cgroup or subreaper tier is, so that the shims of a supervisor that
// dies below it come to it.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	if err := reaper.Enable(); err != nil {
		t.Skipf("SKIP: cannot become a subreaper: %v", err)
	}
}

// TestInitsOfASupervisorThatExitedAreReaped: a program that used corral
// and exited normally leaves its idle inits behind; they see it gone and
// exit, handed as orphans to the nearest subreaper, here a supervisor
// that did not start them (a test binary rerun as another user, a tool
// that a service started outside any run). Corral there reaps them: they
// are nobody else's to wait for.
func TestInitsOfASupervisorThatExitedAreReaped(t *testing.T) {
	becomeSubreaper(t)
	tag := testutil.Tag(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), supervisorEnv+"="+string(corral.ContainmentSubreaper)+",exit", testutil.TagEnvVar(tag))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("supervisor: %v %s", err, out)
	}
	var s supervised
	if err := json.Unmarshal(out, &s); err != nil || s.Handle.Init == 0 {
		t.Fatalf("supervisor printed %q (%v): no init", out, err)
	}
	orphansReaped(t, []int{s.Handle.Init})
	testutil.AssertNoZombies(t, time.Second)
}

// TestSupervisorKilledTakesItsTreeWithIt is guarantee 7: when the
// supervisor is killed with SIGKILL, every process of its runs is gone
// within a second (plus the time the machine kept runnable tasks off the
// CPU), on every tier, sandboxed or not.
func TestSupervisorKilledTakesItsTreeWithIt(t *testing.T) {
	var hows []string
	for _, tier := range tiers(t) {
		hows = append(hows, string(tier))
		if tier == corral.ContainmentCgroup {
			hows = append(hows, string(tier)+",goguardian") // the fallback, where the native guardian runs
		}
	}
	sandboxed := []string{string(corral.ContainmentSubreaper) + ",sandbox", ",enclosure"}
	if _, err := cgroup.Detect(); err == nil {
		sandboxed = append(sandboxed, string(corral.ContainmentCgroup)+",sandbox")
	} else if !testutil.AsNobody() {
		t.Run("cgroup-sandbox", func(t *testing.T) { t.Skipf("SKIP: the cgroup tier is not available here: %v", err) })
	}
	if why := sandboxProblem(t); why != nil {
		for _, how := range sandboxed {
			t.Run(caseName(how), func(t *testing.T) { t.Skipf("SKIP: this machine cannot build the sandbox: %v", why) })
		}
	} else {
		hows = append(hows, sandboxed...)
	}
	for _, how := range hows {
		t.Run(caseName(how), func(t *testing.T) {
			becomeSubreaper(t)
			tag := testutil.Tag(t)
			boxed := strings.Contains(how, "sandbox") || strings.Contains(how, "enclosure")
			if boxed {
				t.Setenv("TMPDIR", t.TempDir()) // where the supervisor makes its sandbox's /tmp
			}
			cmd, s := startSupervisor(t, tag, how)
			if s.Handle.Init == 0 && s.Guardian == 0 {
				t.Fatalf("nothing binds the tree to the supervisor: %+v", s)
			}
			kids, _ := procfs.Children(cmd.Process.Pid)
			clock := testutil.StartSchedClock()
			cmd.Process.Kill()
			cmd.Wait()
			killed := time.Now()
			if !testutil.Eventually(time.Second+clock.Waited()+5*time.Second, func() bool { return len(testutil.Tagged(tag)) == 0 }) {
				t.Fatalf("%d tagged processes alive after the supervisor's death: %v", len(testutil.Tagged(tag)), testutil.Tagged(tag))
			}
			if took := time.Since(killed); took > time.Second+clock.Waited() {
				t.Errorf("the tree took %v to go after the supervisor's death (%v of CPU starvation)", took, clock.Waited())
			}
			orphansReaped(t, kids)
			if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "corral-sandbox-*")); boxed && len(left) > 0 {
				// The dead supervisor could not remove its sandbox's
				// private /tmp; the next sandbox made on the machine does.
				t.Logf("the dead supervisor left %d private /tmp directories; sweeping", len(left))
				if n := proc.SweepBoxTmps(); n != len(left) {
					t.Errorf("the sweep removed %d of the dead supervisor's %d directories %v", n, len(left), left)
				}
				if again, _ := filepath.Glob(filepath.Join(os.TempDir(), "corral-sandbox-*")); len(again) > 0 {
					t.Errorf("left behind: %v", again)
				}
			}
		})
	}
}

// TestDetachedLeftoversOutliveTheirSupervisor: what a cgroup-tier run
// detached (LeftoversDetach) outlives the supervisor's normal exit, when
// its guardian kills everything left in the supervisor's cgroup directory;
// with the native guardian and with the Go one.
func TestDetachedLeftoversOutliveTheirSupervisor(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("SKIP: the cgroup tier is not available here: %v", err)
	}
	for _, variant := range []string{"detach", "detach-goguardian"} {
		t.Run(variant, func(t *testing.T) {
			becomeSubreaper(t)
			tag := testutil.Tag(t)
			t.Cleanup(func() { testutil.KillTagged(tag); testutil.ReapZombies() })
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), supervisorEnv+"="+string(corral.ContainmentCgroup)+","+variant, testutil.TagEnvVar(tag))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("supervisor: %v %s", err, out)
			}
			var s supervised
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatalf("supervisor printed %q: %v", out, err)
			}
			// The double fork's subshell may not have exited yet: 2 or 3.
			if s.Detached < 2 || s.Guardian == 0 || s.BindingNote != "" {
				t.Fatalf("supervisor: %+v, want 2 or 3 detached, a guardian and no note", s)
			}
			if s.NativeGuardian == (variant == "detach-goguardian") {
				t.Fatalf("the supervisor's guardian native=%v in variant %s", s.NativeGuardian, variant)
			}
			// The guardian has acted once it is gone.
			testutil.WaitFor(t, 20*time.Second, "the supervisor's guardian to end", func() bool {
				st, err := procfs.ReadStat(s.Guardian)
				return err != nil || st.Zombie()
			})
			// Both sleeps, once they are sleeps (a loaded machine may not
			// have executed them yet), and nothing else.
			sleeps := func() (n int) {
				for _, st := range testutil.Tagged(tag) {
					if st.Comm == "sleep" && !st.Zombie() {
						n++
					}
				}
				return n
			}
			if !testutil.Eventually(20*time.Second, func() bool { return sleeps() == 2 && len(testutil.Tagged(tag)) == 2 }) {
				t.Fatalf("%d of the 2 detached sleeps outlived their supervisor: %v", sleeps(), testutil.Tagged(tag))
			}
			for _, st := range testutil.Tagged(tag) {
				cg, _ := procfs.Cgroup2(st.Pid)
				if !cgroup.IsRunLeaf(cg) || strings.Count(filepath.Base(cg), ".") != 2 {
					t.Errorf("detached pid %d is in %s, want a detached leaf of corral's", st.Pid, cg)
				}
			}
		})
	}
}

// caseName names the subtest of a test supervisor's tier and variant.
func caseName(how string) string { return strings.Trim(strings.ReplaceAll(how, ",", "-"), "-") }

// sandboxProblem returns why this machine cannot build the sandbox, or
// nil when it can.
func sandboxProblem(t *testing.T) error {
	t.Helper()
	// What this machine lacks, found by the sandbox's own probe (its clone
	// into the namespaces, Landlock, seccomp): when it lacks nothing, a
	// sandboxed run that fails is corral's failure, not the machine's,
	// even when the init reports it as the sandbox unavailable.
	if err := sandbox.Unavailable(); err != nil {
		return err
	}
	_, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}, Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}})
	if err != nil {
		t.Fatalf("sandboxed true: %v", err)
	}
	return nil
}

// TestAnIdleInitThatDiesIsReaped: an init kept idle for the next run is
// still waited for: killed while it waits, it is reaped, not left a
// zombie until some run would have taken it.
func TestAnIdleInitThatDiesIsReaped(t *testing.T) {
	p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"true"}, Containment: corral.ContainmentSubreaper})
	if err != nil {
		t.Fatal(err)
	}
	h := p.Handle()
	p.Wait()
	if h.Init == 0 {
		t.Fatalf("no init: %+v", h)
	}
	if st, err := procfs.ReadStat(h.Init); err != nil || st.Start != h.InitStartTicks || st.Zombie() {
		t.Fatalf("the init is not idle: %+v %v", st, err)
	}
	if err := procfs.Signal(h.Init, h.InitStartTicks, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	orphansReaped(t, []int{h.Init})
}

// TestFindLabelledFindsARunsTreeByItsLabel: a run of the cgroup tier is
// found by its label alone, as a supervisor that died before recording its
// handle left it, and the handle found reclaims it.
func TestFindLabelledFindsARunsTreeByItsLabel(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("SKIP: the cgroup tier is not available here: %v", err)
	}
	tag := testutil.Tag(t)
	label := "exec-" + tag[len(tag)-12:]
	spec := bash(tag, `sleep 600 & echo up; sleep 600`)
	spec.Containment, spec.Label = corral.ContainmentCgroup, label
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Wait()
	defer p.Stop()
	testutil.WaitFor(t, 10*time.Second, "the run to be up", func() bool { o, _ := p.Output(); return o.Text() == "up\n" })
	h, ok := proc.FindLabelled(label)
	if !ok || h.Cgroup != p.Handle().Cgroup || h.Containment != corral.ContainmentCgroup {
		t.Fatalf("FindLabelled(%q) = %+v %v, want the run's leaf %s", label, h, ok, p.Handle().Cgroup)
	}
	if _, ok := proc.FindLabelled(label + "x"); ok {
		t.Errorf("a label that is not the run's found a tree")
	}
	if n, err := proc.Reclaim(context.Background(), h); err != nil || n < 2 {
		t.Fatalf("Reclaim of the handle found: %d %v", n, err)
	}
	res, _ := p.Wait()
	if res.Signal != unix.SIGKILL {
		t.Errorf("the run ended %s, want killed by the reclaim", res.Status())
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
}
