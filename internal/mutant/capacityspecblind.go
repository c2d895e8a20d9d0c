//go:build !mutation_capacityspecblind

package mutant

// CapacitySpecBlind, when true: CheckCapacityFor counts every run as one with captured output pipes, whatever its spec says.
const CapacitySpecBlind = false
