//go:build !mutation_guardianunawaited

package mutant

// GuardianUnawaited, when true: a cgroup-tier run's command starts without waiting for its supervisor's guardian to be up.
const GuardianUnawaited = false
