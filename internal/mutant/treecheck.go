//go:build !mutation_treecheck

package mutant

// TreeCheckSkipped, when true: the emptiness check after the main process exits is skipped: leftovers are never looked for.
const TreeCheckSkipped = false
