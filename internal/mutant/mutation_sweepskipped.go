//go:build mutation_sweepskipped

// Mutant: no corral process sweeps what dead supervisors left in the corral-owned cgroup directory.
// Guarantee: what a supervisor killed with its guardian left in the cgroup hierarchy goes within a few corral starts (the sweep runs once the first cgroup-tier run's command has started)
// Caught: ./cmd/corral TestRunSweepsWhatADeadSupervisorLeft

package mutant

// SweepSkipped, mutated: no corral process sweeps what dead supervisors left in the corral-owned cgroup directory.
const SweepSkipped = true
