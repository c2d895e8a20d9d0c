//go:build !mutation_timedouthidden

package mutant

// TimedOutHidden, when true: a run that timed out reports timed_out false.
const TimedOutHidden = false
