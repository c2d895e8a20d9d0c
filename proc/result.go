package proc

import (
	"fmt"
	"syscall"
	"time"

	"github.com/corralrun/corral"
)

// Result is the honest account of one supervised run.
type Result struct {
	// Pid is the main process's pid.
	Pid int

	// ExitCode is the main process's exit status, or -1 when a signal ended
	// it.
	ExitCode int

	// Signal is the signal that ended the main process, or 0.
	Signal syscall.Signal

	// TimedOut reports that Spec.Timeout expired before the run was over.
	TimedOut bool

	// Cancelled reports that the context ended or Stop was called before the
	// run was over.
	Cancelled bool

	// Start is when the main process was started; Spec.Timeout runs from
	// it.
	Start time.Time

	// Duration runs from Start to the moment the run was over: the tree gone
	// (or detached) and the output drained.
	Duration time.Duration

	// Stdout and Stderr are what was kept of each stream.
	Stdout, Stderr corral.Output

	// Containment is the tier that held the tree.
	Containment corral.Containment

	// ContainmentNote says why a stronger tier was not used, when one
	// would have been chosen on a better equipped machine.
	ContainmentNote string

	// LimitsNote says which of Spec.Limits were applied, or why not.
	LimitsNote string

	// Binding says what ends the tree if the supervisor itself is killed,
	// SIGKILL included (guarantee 7): BindingPidNamespace, BindingInit or
	// BindingGuardian; empty when nothing does here, with the reason in
	// BindingNote.
	Binding     string
	BindingNote string

	// Killed counts the processes of the tree that corral signalled to end:
	// on timeout or cancellation, and leftovers after the main process exited,
	// also those that left the process group under the process-group tier
	// (the run's init kills them, and says how many, before Run returns).
	// A process already in the kernel's exit, going by itself (a leftover
	// that closed the pipes as it exited), is neither signalled nor
	// counted; the run still ends only once it is gone (Linux).
	// On macOS and the BSDs it counts the process group as one (see
	// Platforms in the package documentation).
	Killed int

	// Detached counts processes left running under LeftoversDetach.
	Detached int

	// Sandbox says what confined the run; nil when it ran unconfined.
	Sandbox *corral.SandboxReport

	// Guard says what kept the run from its supervisor's secrets (see
	// Spec.Guard); nil when the spec asked for no guard.
	Guard *corral.GuardReport

	// Survivors counts processes of the tree still alive when the run was
	// over although they should have been killed. Corral's guarantee is
	// that it is zero in the cgroup and subreaper tiers; a process stuck in
	// uninterruptible sleep (a hung network file system) is the exception.
	// A process that was killed but not yet scheduled to die (a starved
	// machine) is waited for, not counted. When the main process is among
	// the survivors, its exit status is unknown: ExitCode is -1 and Signal
	// is 0. On macOS and the BSDs it is 1 when the process group still had
	// a member, whatever their number.
	Survivors int

	// Timeline records when corral acted to end the run and how late each
	// action came by corral's own clock (the bounded-return guarantee is
	// on Timeline.Late).
	Timeline Timeline

	// SurvivorNote names the survivors and their state ("pid 812 (cat) in
	// state D: uninterruptible sleep, stuck in the kernel"), when there are
	// any and the platform can tell.
	SurvivorNote string
}

// Success reports whether the main process exited 0 by itself in time.
func (r *Result) Success() bool {
	return r.ExitCode == 0 && r.Signal == 0 && !r.TimedOut && !r.Cancelled
}

// Status is a short human reading of how the run ended, such as "exit 0",
// "signal SIGKILL", "timed out (signal SIGTERM)".
func (r *Result) Status() string {
	var s string
	if r.Signal != 0 {
		s = "signal " + SignalName(r.Signal)
	} else {
		s = fmt.Sprintf("exit %d", r.ExitCode)
	}
	switch {
	case r.TimedOut:
		return "timed out (" + s + ")"
	case r.Cancelled:
		return "cancelled (" + s + ")"
	}
	return s
}

// Handle identifies a running tree durably enough to find and kill it
// after the supervisor itself died: record it when a run starts (the start
// time is read on the first call to Process.Handle while the run lasts),
// and pass it to Reclaim after a restart.
type Handle struct {
	// Pid and StartTicks name the main process (start time in clock ticks
	// after boot, on Linux), which also leads the tree's session and group.
	Pid        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks,omitempty"`
	// Cgroup is the run's cgroup leaf, when the cgroup tier held it.
	Cgroup string `json:"cgroup,omitempty"`
	// Init and InitStartTicks name the run's init (a subreaper holding
	// the tree, or pid 1 of the run's pid namespace), when there is one.
	Init           int    `json:"init,omitempty"`
	InitStartTicks uint64 `json:"init_start_ticks,omitempty"`
	// Containment is the tier that held the tree.
	Containment corral.Containment `json:"containment"`
}

// What ends a run's tree if the supervisor itself is killed (Result.Binding).
const (
	// BindingPidNamespace: the run's init is pid 1 of a pid namespace and
	// dies with the supervisor (PR_SET_PDEATHSIG); the kernel then kills
	// every process of the namespace.
	BindingPidNamespace = "pid-namespace"

	// BindingInit: the run's init, a child subreaper holding every
	// descendant, freezes and kills them when the supervisor goes.
	BindingInit = "init"

	// BindingGuardian: a process bound to the supervisor kills the run's
	// cgroup leaf when the supervisor goes.
	BindingGuardian = "guardian"
)
