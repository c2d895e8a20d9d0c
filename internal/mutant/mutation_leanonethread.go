//go:build mutation_leanonethread

// Mutant: one lean thread serves every start, so starts wait for each other's exec while cores idle.
// Guarantee: 3. bounded memory (starts of many runs use the machine's cores)
// Caught: ./proc TestLeanThreadKeepsItsChildrenOffTheMainThread

package mutant

// LeanOneThread, mutated: one lean thread serves every start, so starts wait for each other's exec while cores idle.
const LeanOneThread = true
