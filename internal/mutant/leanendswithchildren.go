//go:build !mutation_leanendswithchildren

package mutant

// LeanEndsWithChildren, when true: the lean thread ends while runs it started live, and its children pass to the main thread, whose list every run's end reads.
const LeanEndsWithChildren = false
