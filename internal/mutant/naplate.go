//go:build !mutation_naplate

package mutant

// NapLate, when true, ends the nap before a timeout's stop signal 200 ms
// after the deadline.
const NapLate = false
