//go:build !mutation_stdininherited

package mutant

// StdinInherited, when true: a command without Spec.Stdin reads the supervisor's stdin, not /dev/null.
const StdinInherited = false
