package proc

import (
	"errors"
	"fmt"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
)

// raiseOnce raises RLIMIT_NOFILE at the first Start (see RaiseOpenFileLimit).
var raiseOnce sync.Once

// ErrLimit means a limit of the system or of this process would be hit
// by the runs asked for: open files (RLIMIT_NOFILE), processes
// (RLIMIT_NPROC, a cgroup's pids.max, the kernel's pid_max or
// threads-max). CheckCapacity returns it before any run starts; Start
// wraps it around a failure the limit caused. The error names the limit,
// its value and what uses it; test for it with errors.Is.
var ErrLimit = errors.New("limit reached")

// What one run holds at most while its command runs, on any tier. On the
// cgroup tier: three descriptors (the read ends of its two output pipes
// and the main process's pidfd) and one process, the command. Where an
// init holds the tree (the other Linux tiers, sandboxed and guarded runs):
// the init's control socket too, four descriptors, and the init, a second
// process; a run in an Enclosure, whose init is not this process's child,
// holds the init's pidfd as well: five. (While at most 64 runs end, each
// also holds an eventfd for corral's own clock, and the init's pidfd again.)
const (
	FDsPerRun       = 5
	ProcessesPerRun = 2
)

// The cgroup tier's figures, for plain runs, and a run's whose init is
// this process's child (it holds no pidfd of the init while its command
// runs).
const (
	cgroupFDsPerRun       = 3
	cgroupProcessesPerRun = 1
	ownInitFDsPerRun      = 4
)

// CheckCapacity reports whether this process can hold n more concurrent
// runs of tier (empty: the tier ContainmentAuto picks here) beside what
// it holds now. Each plain run of the cgroup tier holds three descriptors
// and at least one process, each run of another tier four descriptors
// (FDsPerRun in an Enclosure) and at least ProcessesPerRun processes; a run's command may
// start more processes, which no check can know, and a sandboxed run
// counts as one of the other tiers. It returns nil, or an error wrapping
// ErrLimit that names the first limit they would hit, with its value,
// what is in use and what to raise. It raises this process's soft
// RLIMIT_NOFILE first, as Start does (see RaiseOpenFileLimit). Where the
// system has no such limits (Windows), it returns nil.
//
// Call it before starting many runs at once (a service admitting an agent
// of many slots, a benchmark): Start itself fails with the same error
// only once a limit has been hit.
func CheckCapacity(n int, tier corral.Containment) error {
	return CheckCapacityFor(n, &Spec{Containment: tier})
}

// CheckCapacityFor is CheckCapacity for n more runs of s: what each run
// holds follows from the whole spec, not its tier alone. A run whose
// output streams are files of Stdio holds no pipe (on the cgroup tier,
// one descriptor: its main process's pidfd); one with a SpillDir holds a
// spill file per stream besides; one whose Stdin is a reader other than
// a file, the pipe it is copied through; one with a Sandbox or a Guard,
// an init's control socket, as on the tiers without a cgroup; one in an
// Enclosure, the init's pidfd besides.
func CheckCapacityFor(n int, s *Spec) error {
	return CheckCapacityBeside(n, s, 0)
}

// CheckCapacityBeside is CheckCapacityFor for runs beside each of which
// the caller holds fds descriptors of its own (a service's log file of
// each run, say): the check counts them with the runs'.
func CheckCapacityBeside(n int, s *Spec, fds int) error {
	if n <= 0 || mutant.CapacityUnchecked {
		return nil
	}
	return checkCapacity(n, s, int64(max(fds, 0)))
}

// limitError is what CheckCapacity returns: what would be hit, and by how
// much.
type limitError struct {
	what  string // "RLIMIT_NOFILE", "pids.max of /sys/fs/cgroup/...", ...
	limit int64
	used  int64 // in use now
	need  int64 // what the runs would add
	unit  string
	fix   string
}

func (e *limitError) Error() string {
	return fmt.Sprintf("proc: %d more %s needed, but %s is %d with %d in use: %s", e.need, e.unit, e.what, e.limit, e.used, e.fix)
}

func (e *limitError) Unwrap() error { return ErrLimit }
