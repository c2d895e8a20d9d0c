//go:build mutation_inheritunchecked

// Mutant: an idle init started before the supervisor changed its user,
// umask, a resource limit or its OOM score adjustment serves the next run,
// whose command starts with the old ones where a direct child gets the new
// (as root, after the supervisor dropped root for nobody).
// Guarantee: 5. no inherited surprises (process state)
// Caught: ./proc TestCommandsStartWithTheProcessStateADirectChildWould
// Caught: ./proc TestCommandsStartAsTheUserTheSupervisorIsNow

package mutant

// InheritUnchecked, mutated: every state reads the same.
const InheritUnchecked = true
