//go:build mutation_latebylook

// Mutant: whether a process executed its program within the window after
// the stop signal (a shell's child that lost the signal in its fork) is
// judged by when corral looked: a supervisor starved past the window
// never signals the command again, and the command sits out the grace.
// Guarantee: 1. bounded return (the stop reaches a command started as it was sent)
// Caught: ./proc TestLateLookStillSignalsAnEarlyExec

package mutant

// LateByLook, mutated: by the look.
const LateByLook = true
