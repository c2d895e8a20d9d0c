//go:build mutation_prestartoff

// Mutant: no init is started ahead, so each of a burst of starts on an init's tier waits for a Go program's start.
// Guarantee: 3. bounded memory (a burst of starts uses the machine's cores, not one init's start after another)
// Caught: ./proc TestABurstOfStartsTakesInitsStartedAhead

package mutant

// PrestartOff, mutated: no init is started ahead.
const PrestartOff = true
