//go:build !mutation_finalizelate

package mutant

// FinalizeLate, when true, finalizes a headless turn the agent ended a
// second after its result line was read.
const FinalizeLate = false
