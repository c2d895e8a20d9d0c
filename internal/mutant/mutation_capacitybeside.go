//go:build mutation_capacitybeside

// Mutant: CheckCapacityBeside ignores the descriptors the caller holds beside each run (a file of the caller's for each).
// Guarantee: 3. bounded memory (limits said before runs start)
// Caught: ./proc TestCheckCapacityBesideCountsTheCallersDescriptors

package mutant

// CapacityBesideIgnored, mutated: CheckCapacityBeside ignores the caller's descriptors beside each run.
const CapacityBesideIgnored = true
