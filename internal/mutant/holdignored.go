//go:build !mutation_holdignored

package mutant

// HoldIgnored, when true: Start does not wait for Spec.Hold; the command starts as soon as the run is ready.
const HoldIgnored = false
