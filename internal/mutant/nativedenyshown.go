//go:build !mutation_nativedenyshown

package mutant

// NativeDenyShown, when true: the native init's plan leaves the denied paths out: they are readable in its sandboxes.
const NativeDenyShown = false
