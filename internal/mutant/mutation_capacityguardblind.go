//go:build mutation_capacityguardblind

// Mutant: the service's start-up capacity warning counts every run as unguarded (no init's socket).
// Guarantee: 3. bounded memory (limits said before runs start)
// Caught: ./service TestStartCountsWhatAGuardedRunHolds

package mutant

// CapacityGuardBlind, mutated: the service's start-up capacity warning counts every run as unguarded.
const CapacityGuardBlind = true
