//go:build mutation_guardianunawaited

// Mutant: the first cgroup-tier run's command starts without waiting for the guardian its Start began to prepare.
// Guarantee: 7. the tree dies with its supervisor (a cgroup-tier command never runs before its supervisor's guardian is up)
// Caught: ./proc TestFirstCgroupRunStartsOnceItsGuardianIsUp

package mutant

// GuardianUnawaited, mutated: the first cgroup-tier run's command starts without waiting for the guardian its Start began to prepare.
const GuardianUnawaited = true
