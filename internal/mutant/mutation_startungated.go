//go:build mutation_startungated

// Mutant: any number of Starts make their descriptors at once, before they wait for a thread to start the child.
// Guarantee: 3. bounded memory (runs that fit the descriptors start)
// Caught: ./proc TestABurstOfStartsFitsTheDescriptorsItsRunsNeed

package mutant

// StartUngated, mutated: any number of Starts make their descriptors at once.
const StartUngated = true
