//go:build !mutation_secretfdkept

package mutant

// SecretFDKept, when true: a secret read from /dev/fd/N leaves the inherited descriptor N open, for every command the process starts to inherit.
const SecretFDKept = false
