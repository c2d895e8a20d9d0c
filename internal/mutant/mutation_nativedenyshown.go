//go:build mutation_nativedenyshown

// Mutant: the native init's plan leaves the denied paths out: they are readable in its sandboxes.
// Guarantee: 8. confinement that holds (the native init builds the Go init's view: denied paths hidden)
// Caught: ./proc TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox

package mutant

// NativeDenyShown, mutated: the native init's plan leaves the denied paths out.
const NativeDenyShown = true
