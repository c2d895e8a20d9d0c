//go:build mutation_clocksunbounded

// Mutant: every run that ends holds an OS thread for corral's own clock, however many end at once.
// Guarantee: 3. bounded memory (threads)
// Caught: ./proc TestEndingRunsHoldAtMostMaxLockedClocks

package mutant

// ClocksUnbounded, mutated: every run that ends holds an OS thread for corral's own clock, however many end at once.
const ClocksUnbounded = true
