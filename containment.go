package corral

import "fmt"

// Containment names how a run's process tree was held, strongest first. The
// tier actually used is reported with every run, with the reason when a
// stronger tier was wanted but unavailable.
type Containment string

const (
	// ContainmentAuto asks for the strongest tier the machine allows. It is
	// never reported as the tier used.
	ContainmentAuto Containment = ""

	// ContainmentCgroup runs the command in a cgroup v2 leaf of its own,
	// created under a corral-owned directory. The child is born inside the
	// leaf (clone3 CLONE_INTO_CGROUP), so no descendant can escape it, and the
	// whole tree is killed at once with cgroup.kill. Linux only; needs root or
	// a delegated cgroup subtree.
	ContainmentCgroup Containment = "cgroup"

	// ContainmentSubreaper makes the supervisor a child subreaper, so that
	// orphans of the tree are reparented to it, and runs the command in its
	// own session. Teardown stops the tree with SIGSTOP before killing it, to
	// beat fork races, and signals through pidfds. A descendant that both
	// leaves the session and clears the trail (setsid, new process group,
	// empty environment) while other runs share the supervisor can only be
	// attributed by lineage. Linux only, no privileges needed.
	ContainmentSubreaper Containment = "subreaper"

	// ContainmentPidNamespace holds a sandboxed run in a pid namespace of
	// its own, whose pid 1 is the run's init: no process can leave it, and
	// the kernel kills all of it when the init dies. It is what a sandboxed
	// run gets unless it asks for the cgroup tier or for limits, which need
	// a cgroup leaf. Linux only, with a sandbox.
	ContainmentPidNamespace Containment = "pidns"

	// ContainmentProcessGroup runs the command in its own process group and
	// signals the group. Descendants that move to another group or session
	// escape it. The portable floor (macOS, BSDs).
	ContainmentProcessGroup Containment = "pgroup"

	// ContainmentJobObject assigns the command to a Windows Job Object with
	// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE before its first instruction runs.
	ContainmentJobObject Containment = "job"
)

// String returns the tier's name, or "auto" for [ContainmentAuto].
func (c Containment) String() string {
	if c == ContainmentAuto {
		return "auto"
	}
	return string(c)
}

// ParseContainment parses a tier name as printed by [Containment.String].
func ParseContainment(s string) (Containment, error) {
	switch c := Containment(s); c {
	case ContainmentCgroup, ContainmentPidNamespace, ContainmentSubreaper, ContainmentProcessGroup, ContainmentJobObject:
		return c, nil
	case "auto", "":
		return ContainmentAuto, nil
	}
	return "", fmt.Errorf("unknown containment %q: want auto, cgroup, pidns, subreaper, pgroup or job", s)
}
