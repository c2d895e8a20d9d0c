//go:build mutation_killlate

// Mutant: SIGKILL is sent 200 ms after the grace ends.
// Guarantee: 1. bounded return
// Caught: ./proc TestSigkillComesWhenTheGraceEnds
// Caught: ./proc TestRunHoldsTheDeadlineAndLeavesNothing

package mutant

// KillLate, mutated: SIGKILL comes 200 ms after the grace.
const KillLate = true
