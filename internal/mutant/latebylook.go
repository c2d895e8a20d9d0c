//go:build !mutation_latebylook

package mutant

// LateByLook, when true, judges whether a process executed its program
// within the window after the stop signal by when corral looked, not by
// when it executed.
const LateByLook = false
