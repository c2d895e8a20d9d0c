package proc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// supervisorEnv makes the test binary act as a supervisor that starts a
// tree, prints its handle and the pid of its guardian (0 if none), and
// waits to be killed. Its value is the tier, followed by ",sandbox" or
// ",enclosure" for a sandboxed run.
const supervisorEnv = "CORRAL_PROC_TEST_SUPERVISOR"

// supervisorScript leaves a background job, a setsid escapee, a double
// fork and a daemon that clears its environment (tagged in its argv).
const supervisorScript = `sleep 600 & setsid sleep 600 & (sleep 600 &); setsid -f env -i bash -c 'exec 0<&- 1>&- 2>&-; (exec -a TAG-daemon sleep 600 &)'; echo up; sleep 600`

// supervised is what a test supervisor prints.
type supervised struct {
	Handle   proc.Handle `json:"handle"`
	Guardian int         `json:"guardian"`
}

func init() {
	v := os.Getenv(supervisorEnv)
	if v == "" {
		return
	}
	tier, variant, _ := strings.Cut(v, ",")
	tag := os.Getenv(testutil.TagEnv)
	spec := &proc.Spec{
		Args:        []string{"bash", "-c", strings.ReplaceAll(supervisorScript, "TAG", tag)},
		Env:         []string{testutil.TagEnvVar(tag)},
		Containment: corral.Containment(tier),
	}
	switch variant {
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
	kids, _ := procfs.Children(os.Getpid())
	for _, k := range kids {
		if procfs.HasToken(k, "CORRAL_SHIM=guardian") {
			out.Guardian = k
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
	select {}
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
	// Wait for the daemon to finish starting, so that all five are there.
	testutil.WaitFor(t, 20*time.Second, "the supervisor's tree to be up", func() bool { return len(testutil.Tagged(tag)) >= 5 })
	return cmd, s
}

// TestReclaimKillsTheTreeOfADeadSupervisor: when a supervisor died and
// what binds its trees to it died too (its guardian, its run's init), a new
// supervisor reclaims the tree from the handle.
func TestReclaimKillsTheTreeOfADeadSupervisor(t *testing.T) {
	for _, tier := range tiers(t) {
		if tier == corral.ContainmentProcessGroup {
			continue // a group tier run's setsid escapee is beyond reach by design
		}
		t.Run(string(tier), func(t *testing.T) {
			tag := testutil.Tag(t)
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
			reapOrphans(t, kids)
			// Reclaiming again finds nothing and is not an error.
			if n, err := proc.Reclaim(context.Background(), h); err != nil || n != 0 {
				t.Fatalf("second Reclaim: %d %v", n, err)
			}
		})
	}
}

// reapOrphans waits for kids, the children of a killed supervisor (its
// guardian, its runs' inits), to finish their work and die, and reaps them:
// they were handed to this process, a subreaper since runs ran here.
func reapOrphans(t *testing.T, kids []int) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, "the dead supervisor's children to go", func() bool {
		testutil.ReapZombies()
		for _, k := range kids {
			if _, err := procfs.ReadStat(k); err == nil {
				return false
			}
		}
		return true
	})
}

// TestSupervisorKilledTakesItsTreeWithIt is guarantee 7: when the
// supervisor is killed with SIGKILL, every process of its runs is gone
// within a second (plus the time the machine kept runnable tasks off the
// CPU), on every tier, sandboxed or not.
func TestSupervisorKilledTakesItsTreeWithIt(t *testing.T) {
	var hows []string
	for _, tier := range tiers(t) {
		hows = append(hows, string(tier))
	}
	if sandboxWorks(t) {
		hows = append(hows, string(corral.ContainmentSubreaper)+",sandbox", ",enclosure")
		if _, err := cgroup.Detect(); err == nil {
			hows = append(hows, string(corral.ContainmentCgroup)+",sandbox")
		}
	}
	for _, how := range hows {
		t.Run(strings.Trim(strings.ReplaceAll(how, ",", "-"), "-"), func(t *testing.T) {
			tag := testutil.Tag(t)
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
			reapOrphans(t, kids)
		})
	}
}

// sandboxWorks reports whether this machine can build the sandbox, and
// says so when it cannot.
func sandboxWorks(t *testing.T) bool {
	t.Helper()
	_, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}, Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly}})
	if errors.Is(err, proc.ErrSandboxUnavailable) {
		t.Logf("SKIP sandboxed cases: %v", err)
		return false
	}
	if err != nil {
		t.Fatalf("sandboxed true: %v", err)
	}
	return true
}
