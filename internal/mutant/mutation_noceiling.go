//go:build mutation_noceiling

// Mutant: a turn's cost and token ceilings are never crossed: the turn spends on.
// Guarantee: 10. spend is bounded (per run)
// Caught: ./headless TestCostCeilingEndsTheTurnAtTheMessageThatCrossesIt
// Caught: ./headless TestTokenCeilingHoldsWithoutAPrice

package mutant

// NoCeiling turns the ceilings off.
const NoCeiling = true
