//go:build !mutation_initdeafoff

package mutant

// InitDeafOff, when true: a Go init (a sandbox's, or a plain run's where the native one cannot run) does not catch the signals it drops, and dies of a SIGTERM its command sends it.
const InitDeafOff = false
