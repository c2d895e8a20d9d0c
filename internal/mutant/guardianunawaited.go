//go:build !mutation_guardianunawaited

package mutant

// GuardianUnawaited, when true: the first cgroup-tier run's command starts without waiting for the guardian its Start began to prepare.
const GuardianUnawaited = false
