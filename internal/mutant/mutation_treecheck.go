//go:build mutation_treecheck

// Mutant: The emptiness check after the main process exits is skipped: leftovers are never looked for.
// Guarantee: 2. nothing left behind
// Caught: ./proc TestRunKillsLeftoversByDefault
// Caught: ./proc TestRunHoldsTheDeadlineAndLeavesNothing

package mutant

// TreeCheckSkipped, mutated: the emptiness check after the main process exits is skipped: leftovers are never looked for.
const TreeCheckSkipped = true
