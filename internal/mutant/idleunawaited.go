//go:build !mutation_idleunawaited

package mutant

// IdleUnawaited, when true, hands an init to the pool of idle ones without
// waiting for it to kill what the run left below it.
const IdleUnawaited = false
