//go:build mutation_holdignored

// Mutant: Start does not wait for Spec.Hold; the command starts as soon as the run is ready.
// Guarantee: 5. no inherited surprises (what a caller sets up beside Start, such as corral run's signal handlers, is in place before the command's first instruction)
// Caught: ./proc TestHoldKeepsTheCommandBackUntilClosed

package mutant

// HoldIgnored, mutated: Start does not wait for Spec.Hold; the command starts as soon as the run is ready.
const HoldIgnored = true
