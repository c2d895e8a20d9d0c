//go:build !mutation_clocksunbounded

package mutant

// ClocksUnbounded, when true: every run that ends holds an OS thread for corral's own clock, however many end at once.
const ClocksUnbounded = false
