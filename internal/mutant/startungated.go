//go:build !mutation_startungated

package mutant

// StartUngated, when true: any number of Starts make their descriptors at once, before they wait for a thread.
const StartUngated = false
