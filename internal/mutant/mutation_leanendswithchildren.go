//go:build mutation_leanendswithchildren

// Mutant: the lean thread ends while runs it started live, and its children pass to the main thread, whose list every run's end reads.
// Guarantee: 3. bounded memory (a run's end does not cost more with the runs held)
// Caught: ./proc TestLeanThreadKeepsItsChildrenOffTheMainThread

package mutant

// LeanEndsWithChildren, mutated: the lean thread ends while runs it started live, and its children pass to the main thread, whose list every run's end reads.
const LeanEndsWithChildren = true
