package proc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// limitsEnv makes the test binary report on the limits of its own process
// and exit: "raise", "capacity N" or "emfile".
const limitsEnv = "CORRAL_PROC_TEST_LIMITS"

// limitsReport is what the test binary prints in that mode.
type limitsReport struct {
	Before, After, Hard uint64 // soft RLIMIT_NOFILE before and after the first Start
	Command             string // the soft limit the command saw
	Err                 string
	IsLimit             bool
	Started             int
}

func init() {
	v := os.Getenv(limitsEnv)
	if v == "" {
		return
	}
	var r limitsReport
	var lim unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
	r.Before, r.Hard = lim.Cur, lim.Max
	mode, arg, _ := strings.Cut(v, " ")
	switch mode {
	case "raise":
		// Lowered after the program started (the raw call, as another
		// process's prlimit would): the first Start raises it again.
		low := unix.Rlimit{Cur: 300, Max: lim.Max}
		unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&low)), 0, 0, 0)
		res, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"sh", "-c", "ulimit -Sn"}})
		if err != nil {
			r.Err = err.Error()
		} else {
			r.Command = strings.TrimSpace(res.Stdout.Text())
		}
		unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
		r.After = lim.Cur
	case "capacity":
		n, _ := strconv.Atoi(arg)
		if err := proc.CheckCapacity(n, corral.ContainmentSubreaper); err != nil {
			r.Err, r.IsLimit = err.Error(), errors.Is(err, proc.ErrLimit)
		}
	case "capacityfor":
		// Subreaper-tier runs of the null device: no pipe, the init's
		// socket and the main process's pidfd; with SpillDir and
		// captured output, two pipes and two spill files besides.
		n, _ := strconv.Atoi(arg)
		spec := &proc.Spec{Containment: corral.ContainmentSubreaper, Stdio: &[3]*os.File{}}
		if err := proc.CheckCapacityFor(n, spec); err != nil {
			r.Err, r.IsLimit = err.Error(), errors.Is(err, proc.ErrLimit)
		}
		spilled := &proc.Spec{Containment: corral.ContainmentSubreaper, SpillDir: os.TempDir()}
		if err := proc.CheckCapacityFor(n/2, spilled); err == nil {
			r.Command = "spilled runs accepted"
		}
	case "capacitybeside":
		// The same null-device runs, with one descriptor of the
		// caller's beside each (a log file): three each, not two.
		n, _ := strconv.Atoi(arg)
		spec := &proc.Spec{Containment: corral.ContainmentSubreaper, Stdio: &[3]*os.File{}}
		if err := proc.CheckCapacityBeside(n, spec, 0); err != nil {
			r.Err = "alone: " + err.Error()
		}
		if err := proc.CheckCapacityBeside(n, spec, 1); err == nil {
			r.Command = "runs with a descriptor of the caller's beside each accepted"
		} else {
			r.IsLimit = errors.Is(err, proc.ErrLimit)
		}
	case "burst":
		// N runs started at once from N goroutines, as a service's
		// dispatcher starts a burst of tasks: all must start.
		n, tag, _ := strings.Cut(arg, " ")
		count, _ := strconv.Atoi(n)
		ps := make([]*proc.Process, count)
		errs := make([]error, count)
		var wg sync.WaitGroup
		for i := range count {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ps[i], errs[i] = proc.Start(context.Background(), &proc.Spec{Args: []string{"sleep", "30"}, Env: []string{testutil.TagEnvVar(tag)}})
			}()
		}
		wg.Wait()
		for i, p := range ps {
			if p == nil {
				if r.Err == "" {
					r.Err = errs[i].Error()
				}
				continue
			}
			r.Started++
			p.Stop()
		}
		for _, p := range ps {
			if p != nil {
				p.Wait()
			}
		}
	case "emfile":
		var ps []*proc.Process
		for len(ps) < 200 {
			p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"sleep", "30"}, Env: []string{testutil.TagEnvVar(arg)}})
			if err != nil {
				r.Err, r.IsLimit = err.Error(), errors.Is(err, proc.ErrLimit)
				break
			}
			ps = append(ps, p)
		}
		r.Started = len(ps)
		for _, p := range ps {
			p.Stop()
		}
		for _, p := range ps {
			p.Wait()
		}
	}
	json.NewEncoder(os.Stdout).Encode(r)
	os.Exit(0)
}

// limited runs the test binary in mode with RLIMIT_NOFILE soft and hard
// set first, and returns its report.
func limited(t *testing.T, mode string, soft, hard int) limitsReport {
	t.Helper()
	set := fmt.Sprintf("ulimit -Sn %d && ulimit -Hn %d", soft, hard)
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && uint64(hard) > lim.Max {
		set = fmt.Sprintf("ulimit -Hn %d && ulimit -Sn %d", hard, soft) // raised: the hard limit first
	}
	cmd := exec.Command("bash", "-c", set+` && exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), limitsEnv+"="+mode)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", mode, err, out)
	}
	var r limitsReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v: %q", mode, err, out)
	}
	return r
}

// TestStartRaisesTheOpenFileLimitButNotTheCommands proves that the first
// Start raises a soft RLIMIT_NOFILE lowered since the program started to
// the hard limit (less one, the Go runtime's mark), and that the command
// still gets the soft limit the program was started with.
func TestStartRaisesTheOpenFileLimitButNotTheCommands(t *testing.T) {
	r := limited(t, "raise", 256, 2048)
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	if r.After != 2047 || r.Hard != 2048 {
		t.Errorf("soft limit after the first Start %d (hard %d), want 2047", r.After, r.Hard)
	}
	if r.Command != "256" {
		t.Errorf("the command's soft limit is %q, want 256 (the one its supervisor was started with)", r.Command)
	}
}

// TestCheckCapacityNamesTheOpenFileLimit proves that asking for more
// concurrent runs than the descriptors allow is refused before any
// starts, naming the limit, and that as many as they allow are not.
func TestCheckCapacityNamesTheOpenFileLimit(t *testing.T) {
	r := limited(t, "capacity 1000", 1024, 1024)
	if !r.IsLimit || !strings.Contains(r.Err, "RLIMIT_NOFILE") || !strings.Contains(r.Err, "1024") {
		t.Errorf("1,000 runs with 1,024 descriptors: %q (ErrLimit %v), want ErrLimit naming RLIMIT_NOFILE and 1024", r.Err, r.IsLimit)
	}
	if r := limited(t, "capacity 100", 1024, 1024); r.Err != "" {
		t.Errorf("100 runs with 1,024 descriptors refused: %s", r.Err)
	}
}

// TestCheckCapacityForCountsWhatTheSpecHolds proves that the capacity
// asked for follows from the spec: with 1,024 descriptors, 400 runs whose
// output goes to the null device (2 descriptors each) fit, while 200 that
// capture their output and spill it (6 each) do not.
func TestCheckCapacityForCountsWhatTheSpecHolds(t *testing.T) {
	r := limited(t, "capacityfor 400", 1024, 1024)
	if r.Err != "" {
		t.Errorf("400 runs to the null device with 1,024 descriptors refused: %s", r.Err)
	}
	if r.Command != "" {
		t.Errorf("200 runs with captured and spilled output with 1,024 descriptors: %s, want ErrLimit", r.Command)
	}
}

// TestCheckCapacityBesideCountsTheCallersDescriptors proves that the
// descriptors a caller holds beside each run (the service's log file of
// each) are counted with the runs': with 1,024 descriptors, 400 runs to
// the null device fit alone (2 each) and not with one more each.
func TestCheckCapacityBesideCountsTheCallersDescriptors(t *testing.T) {
	r := limited(t, "capacitybeside 400", 1024, 1024)
	if r.Err != "" {
		t.Errorf("400 runs to the null device with 1,024 descriptors refused: %s", r.Err)
	}
	if r.Command != "" || !r.IsLimit {
		t.Errorf("400 runs with a descriptor of the caller's beside each, 1,024 descriptors: %q (ErrLimit %v), want ErrLimit", r.Command, r.IsLimit)
	}
}

// TestABurstOfStartsFitsTheDescriptorsItsRunsNeed proves that runs
// started all at once need the descriptors the runs hold, not those of
// every start at once: with 1,024 descriptors, as many runs as fill 70 %
// of them (233 on the cgroup tier, three each) are started from as many
// goroutines at once, and every one starts. A start holds more than its
// run (the child's ends of its pipes, a cgroup leaf), and without a bound
// on the starts in flight the burst made all of theirs before the first
// child started.
func TestABurstOfStartsFitsTheDescriptorsItsRunsNeed(t *testing.T) {
	each := 4 // the init's socket beside them
	if _, err := cgroup.Detect(); err == nil {
		each = 3
	}
	n := 700 / each
	tag := testutil.Tag(t)
	r := limited(t, fmt.Sprintf("burst %d %s", n, tag), 1024, 1024)
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	if r.Started != n || r.Err != "" {
		t.Fatalf("%d runs started at once with 1,024 descriptors: %d started; first error: %s", n, r.Started, r.Err)
	}
}

// TestCheckCapacityNamesAFullPidsCgroup proves that asking for more runs
// than the pids.max of the supervisor's cgroup holds is refused, naming
// it: the supervisor runs in a cgroup of its own with pids.max 50.
func TestCheckCapacityNamesAFullPidsCgroup(t *testing.T) {
	dir := pidsTestCgroup(t)
	if err := os.WriteFile(dir+"/pids.max", []byte("50"), 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `echo $$ > "$1/cgroup.procs" && exec "$0" -test.run='^$'`, os.Args[0], dir)
	cmd.Env = append(os.Environ(), limitsEnv+"=capacity 100")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var r limitsReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if !r.IsLimit || !strings.Contains(r.Err, "pids.max of the cgroup "+dir) || !strings.Contains(r.Err, "is 50") {
		t.Errorf("100 runs in a cgroup of pids.max 50: %q (ErrLimit %v), want ErrLimit naming that pids.max", r.Err, r.IsLimit)
	}
}

// pidsTestCgroup makes a cgroup with the pids controller inside a corral
// directory, removed when the test ends: in corral's own cgroup v2
// directory if leaves there have the controller, else under the version 1
// pids hierarchy.
func pidsTestCgroup(t *testing.T) string {
	t.Helper()
	base := ""
	if r, err := cgroup.Detect(); err == nil && slices.Contains(r.Controllers, "pids") {
		base = r.Dir
	} else if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		base = "/sys/fs/cgroup/pids/corral"
		if os.Mkdir(base, 0o755) == nil {
			t.Cleanup(func() { os.Remove(base) }) // after dir's removal
		}
	}
	if base == "" {
		t.Skip("no cgroup with the pids controller to make")
	}
	dir := base + "/" + testutil.Tag(t)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		testutil.Eventually(5*time.Second, func() bool { return os.Remove(dir) == nil })
	})
	return dir
}

// TestStartOutOfDescriptorsSaysWhichLimit proves that a Start that runs
// out of descriptors fails with ErrLimit naming RLIMIT_NOFILE, starting
// nothing, and the runs started before it are unharmed.
func TestStartOutOfDescriptorsSaysWhichLimit(t *testing.T) {
	tag := testutil.Tag(t)
	r := limited(t, "emfile "+tag, 64, 64)
	if !r.IsLimit || !strings.Contains(r.Err, "RLIMIT_NOFILE is 64") {
		t.Errorf("Start out of descriptors after %d runs: %q (ErrLimit %v), want ErrLimit naming RLIMIT_NOFILE", r.Started, r.Err, r.IsLimit)
	}
	if r.Started == 0 {
		t.Error("no run started with 64 descriptors")
	}
	testutil.AssertNoTagged(t, tag, 0)
}
