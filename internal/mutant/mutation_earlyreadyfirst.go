//go:build mutation_earlyreadyfirst

// Mutant: the signals corral run begins to catch as it starts are reported caught before they are.
// Guarantee: 5. no inherited surprises (every signal corral run acts on is caught before its command's first instruction)
// Caught: ./cmd/corral/internal/earlysig TestBeginIsReadyOnlyOnceEverySignalIsCaught
// Caught: ./cmd/corral TestRunTakesTheSignalsCaughtAsItStarted

package mutant

// EarlyReadyFirst, mutated: the signals corral run begins to catch as it starts are reported caught before they are.
const EarlyReadyFirst = true
