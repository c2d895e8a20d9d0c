//go:build mutation_prestartchurn

// Mutant: every run that takes an idle init has another started, however full the pool, so a supervisor running one command after another starts an init for each and pushes out the one coming back.
// Guarantee: 3. bounded memory (what a supervisor holds: nothing started that no run asked for)
// Caught: ./proc TestRunsOneAfterAnotherReuseTheirInits

package mutant

// PrestartChurn, mutated: every take of an idle init has another started.
const PrestartChurn = true
