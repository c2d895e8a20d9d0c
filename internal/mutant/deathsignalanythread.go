//go:build !mutation_deathsignalanythread

package mutant

// DeathSignalAnyThread, when true, clears an init's parent-death signal on
// whatever thread serves the run rather than on its main thread.
const DeathSignalAnyThread = false
