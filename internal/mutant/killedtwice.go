//go:build !mutation_killedtwice

package mutant

// KilledTwice, when true, counts a process that FreezeKill killed and that
// is still dying at its last look a second time.
const KilledTwice = false
