//go:build mutation_guardianunawaited

// Mutant: a cgroup-tier run's command starts without waiting for its supervisor's guardian to be up.
// Guarantee: 7. the tree dies with its supervisor (a cgroup-tier command never runs before its supervisor's guardian is up)
// Caught: ./proc TestFirstCgroupRunStartsOnceItsGuardianIsUp

package mutant

// GuardianUnawaited, mutated: a cgroup-tier run's command starts without waiting for its supervisor's guardian to be up.
const GuardianUnawaited = true
