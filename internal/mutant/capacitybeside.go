//go:build !mutation_capacitybeside

package mutant

// CapacityBesideIgnored, when true: CheckCapacityBeside ignores the caller's descriptors beside each run.
const CapacityBesideIgnored = false
