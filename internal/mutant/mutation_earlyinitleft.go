//go:build mutation_earlyinitleft

// Mutant: a sandbox's init forked while its box was made is left alive when the box cannot be made.
// Guarantee: a start that fails leaves no process behind, its init killed and reaped before Start returns
// Caught: ./proc TestABoxThatCannotBeMadeLeavesNoInit

package mutant

// EarlyInitLeft, mutated: a sandbox's init forked while its box was made is left alive when the box cannot be made.
const EarlyInitLeft = true
