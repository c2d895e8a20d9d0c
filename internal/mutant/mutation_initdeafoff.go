//go:build mutation_initdeafoff

// Mutant: a Go init (a sandbox's, or a plain run's where the native one cannot run) does not catch the signals it drops, and dies of a SIGTERM its command sends it.
// Guarantee: only corral ends a run's init: the signals its command sends it are dropped (internal/shim)
// Caught: ./proc TestInitDropsTheSignalsItsCommandSendsIt

package mutant

// InitDeafOff, mutated: a Go init (a sandbox's, or a plain run's where the native one cannot run) does not catch the signals it drops, and dies of a SIGTERM its command sends it.
const InitDeafOff = true
