//go:build mutation_timedouthidden

// Mutant: A run that timed out reports timed_out false.
// Guarantee: 6. honest results
// Caught: ./proc TestRunKeepsOutputPrintedBeforeTheTimeout
// Caught: ./proc TestSigkillComesWhenTheGraceEnds

package mutant

// TimedOutHidden, mutated: a run that timed out reports timed_out false.
const TimedOutHidden = true
