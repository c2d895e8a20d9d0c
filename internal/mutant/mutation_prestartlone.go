//go:build mutation_prestartlone

// Mutant: inits are started ahead at the first start that finds none idle, so a program that starts one run (the CLI) starts eight inits it never uses.
// Guarantee: 3. bounded memory (what a supervisor holds: nothing started that no run asked for)
// Caught: ./proc TestALoneStartStartsNothingAhead

package mutant

// PrestartLone, mutated: a lone start starts inits ahead.
const PrestartLone = true
