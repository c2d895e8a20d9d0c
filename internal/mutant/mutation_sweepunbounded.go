//go:build mutation_sweepunbounded

// Mutant: a corral process's first cgroup-tier run sweeps every directory of the corral-owned cgroup directory, a /proc read for each supervisor alive on the machine.
// Guarantee: a corral command's start does not grow with the number of supervisors alive on the machine (the sweep looks at 16 directories at most)
// Caught: ./internal/cgroup TestSweepLooksAtABoundedNumberOfDirectories

package mutant

// SweepUnbounded, mutated: a corral process's first cgroup-tier run sweeps every directory of the corral-owned cgroup directory, a /proc read for each supervisor alive on the machine.
const SweepUnbounded = true
