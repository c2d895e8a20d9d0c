//go:build !mutation_initfdkept

package mutant

// InitFDKept, when true, keeps an init's pidfd open for its run's life.
const InitFDKept = false
