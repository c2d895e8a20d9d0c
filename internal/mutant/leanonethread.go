//go:build !mutation_leanonethread

package mutant

// LeanOneThread, when true: one lean thread serves every start, so starts wait for each other's exec while cores idle.
const LeanOneThread = false
