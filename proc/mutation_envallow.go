//go:build mutation_envallow

// Mutant: The environment allowlist passes nothing.
// Guarantee: 5. no inherited surprises (env)
// Caught: ./proc TestRunPassesTheEnvironmentAsAsked

package proc

// allowed, mutated for the CI's mutation step (.ci/mutations): the
// allowlist passes nothing. TestRunPassesTheEnvironmentAsAsked must catch
// it. Built only with the tag mutation_envallow.
func allowed(name string, allow []string) bool { return false }
