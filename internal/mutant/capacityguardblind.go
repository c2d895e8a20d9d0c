//go:build !mutation_capacityguardblind

package mutant

// CapacityGuardBlind, when true: the service's start-up capacity warning counts every run as unguarded.
const CapacityGuardBlind = false
