//go:build !mutation_leanmemfdpath

package mutant

// LeanMemfdPathKept, when true: a start from the lean thread executes a program in a memory file (the native init) by the process's descriptor number, which the thread's own table lacks.
const LeanMemfdPathKept = false
