//go:build mutation_finalizelate

// Mutant: A headless turn is finalized 1 s after its result line.
// Guarantee: headless finalization within 100 ms
// Caught: ./headless TestTurnIsFinalizedWithin100msOfItsResult
// Caught: ./headless TestTurnEndsAtResultWhileChildHoldsThePipe

package mutant

// FinalizeLate, mutated: the turn is finalized a second late.
const FinalizeLate = true
