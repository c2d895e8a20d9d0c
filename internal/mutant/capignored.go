//go:build !mutation_capignored

package mutant

// CapIgnored, when true: the capture keeps every byte: the cap is ignored.
const CapIgnored = false
