//go:build mutation_sandboxcause

// Mutant: A sandboxed run whose init cannot be cloned into its namespaces fails with the clone's bare errno: no ErrSandboxUnavailable, no cause named.
// Guarantee: a sandbox this machine cannot build is refused (exit 125), saying why
// Caught: ./cmd/corral TestRunRefusesASandboxItsUserMayNotMake

package proc

// initCloneFailed, mutated for the CI's mutation step (.ci/mutations):
// the clone's error is returned as it is. Built only with the tag
// mutation_sandboxcause.
func initCloneFailed(err error) error { return err }
