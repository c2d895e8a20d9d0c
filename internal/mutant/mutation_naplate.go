//go:build mutation_naplate

// Mutant: the stop signal of a timeout goes 200 ms after the deadline (the
// supervising thread naps past it), which the own clock must not excuse as
// the machine's.
// Guarantee: 1. bounded return
// Caught: ./proc TestRunHoldsTheDeadlineAndLeavesNothing

package mutant

// NapLate, mutated: the nap before the stop signal ends 200 ms late.
const NapLate = true
