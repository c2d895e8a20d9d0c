//go:build !mutation_sweepunbounded

package mutant

// SweepUnbounded, when true: a corral process's first cgroup-tier run sweeps every directory of the corral-owned cgroup directory, a /proc read for each supervisor alive on the machine.
const SweepUnbounded = false
