//go:build mutation_rununheld

// Mutant: corral run and corral timeout start their command without waiting for their signal handlers, which they install in the background.
// Guarantee: 5. no inherited surprises (every signal corral run or corral timeout acts on is caught before its command's first instruction)
// Caught: ./cmd/corral TestRunCommandStartsOnceItsSignalsAreCaught
// Caught: ./cmd/corral TestTimeoutCommandStartsOnceItsSignalsAreCaught

package mutant

// RunUnheld, mutated: corral run and corral timeout start their command without waiting for their signal handlers, which they install in the background.
const RunUnheld = true
