//go:build mutation_stdininherited

// Mutant: A command without Spec.Stdin reads the supervisor's stdin, not /dev/null.
// Guarantee: 5. no inherited surprises (stdin)
// Caught: ./proc TestRunGivesCommandsTheNullDeviceAsStdin

package mutant

// StdinInherited, mutated: a command without Spec.Stdin reads the supervisor's stdin, not /dev/null.
const StdinInherited = true
