//go:build mutation_capacityunchecked

// Mutant: CheckCapacity checks nothing: runs past a limit are accepted.
// Guarantee: 3. bounded memory (limits said before runs start)
// Caught: ./proc TestCheckCapacityNamesTheOpenFileLimit
// Caught: ./proc TestCheckCapacityNamesAFullPidsCgroup

package mutant

// CapacityUnchecked, mutated: CheckCapacity checks nothing: runs past a limit are accepted.
const CapacityUnchecked = true
