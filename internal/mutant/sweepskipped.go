//go:build !mutation_sweepskipped

package mutant

// SweepSkipped, when true: no corral process sweeps what dead supervisors left in the corral-owned cgroup directory.
const SweepSkipped = false
