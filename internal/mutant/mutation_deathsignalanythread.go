//go:build mutation_deathsignalanythread

// Mutant: a detached sandboxed run clears its init's parent-death signal
// on the thread that happens to serve it, not on the main thread, which
// holds the signal: the detached job dies when corral exits.
// Guarantee: 2. leftovers go as asked (detach: they live on)
// Caught: ./cmd/corral TestRunSandboxedDetachOutlivesCorral

package mutant

// DeathSignalAnyThread, mutated: the signal is cleared on the wrong thread.
const DeathSignalAnyThread = true
