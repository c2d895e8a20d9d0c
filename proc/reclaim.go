package proc

import "context"

// Reclaim kills what is left of a run whose supervisor died without
// tearing it down (a crashed service), and returns how many processes it
// killed. On Linux it never signals a process that is not provably the
// run's: with a cgroup the leaf's membership decides; otherwise the main
// process is matched by pid and start time, and its session and process
// group by the id it led. On macOS and the BSDs it kills the process group
// the main process led without such proof, and counts the group as one;
// on Windows there is nothing to reclaim (see Platforms in the package
// documentation). A Handle whose tree is already gone is not an error.
//
// Reclaim is for a new supervisor after a crash. Call it only for handles
// of runs that no live supervisor owns.
func Reclaim(ctx context.Context, h Handle) (int, error) {
	return reclaim(ctx, h)
}

// FindLabelled returns the Handle of the tree proc made for the run whose
// Spec.Label was label, for Reclaim, when it can be found without one: a
// run of the cgroup tier, whose leaf carries its label (by any supervisor
// of this machine, alive or dead). It closes the window in which a
// supervisor died after starting a run but before recording its Handle.
// A run of another tier, or on another system, is not found. Labels are
// meant to be unique per run: with two leaves of one label, either may be
// returned.
func FindLabelled(label string) (Handle, bool) {
	return findLabelled(label)
}
