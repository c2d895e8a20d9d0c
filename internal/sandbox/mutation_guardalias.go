//go:build mutation_guardalias

// Mutant: a hidden path is hidden where it was named only, not in the other mounts that show it (a bind mount of the data directory).
// Guarantee: 8. no task reaches the service's secrets: its data directory, wherever it is mounted
// Caught: ./proc TestGuardKeepsTheRunFromItsSupervisorsSecrets
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/env
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/file

package sandbox

// aliasesOf, mutated for the CI's mutation step (.ci/mutations): it
// returns the path itself and no other mount that shows it. Built only
// with the tag mutation_guardalias.
func aliasesOf(ms []mountEntry, at uint64, path string) []alias {
	return []alias{{path: path, mount: at}}
}
