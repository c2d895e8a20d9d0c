//go:build mutation_capacityspecblind

// Mutant: CheckCapacityFor counts every run as one with captured output pipes, whatever its spec says.
// Guarantee: 3. bounded memory (limits said before runs start)
// Caught: ./proc TestCheckCapacityForCountsWhatTheSpecHolds

package mutant

// CapacitySpecBlind, mutated: CheckCapacityFor counts every run as one with captured output pipes, whatever its spec says.
const CapacitySpecBlind = true
