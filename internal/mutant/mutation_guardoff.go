//go:build mutation_guardoff

// Mutant: the task guard is off by default: a service's tasks run unguarded unless it is asked for.
// Guarantee: 8. no task reaches the service's secrets, in the default configuration
// Caught: ./service TestRunsAreGuardedByDefault
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/env
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/file
// Caught: ./cmd/corral TestUnprivilegedServiceTaskCannotObtainTheServiceToken

package mutant

// GuardOffByDefault takes GuardAuto for GuardOff.
const GuardOffByDefault = true
