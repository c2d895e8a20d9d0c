//go:build !mutation_capacityunchecked

package mutant

// CapacityUnchecked, when true: CheckCapacity checks nothing: runs past a limit are accepted.
const CapacityUnchecked = false
