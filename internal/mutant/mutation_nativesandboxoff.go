//go:build mutation_nativesandboxoff

// Mutant: every sandboxed run's init is the Go one, the native init serving plain runs only.
// Guarantee: start-up: a sandboxed run pays no Go program's start before its command (issue 27)
// Caught: ./proc TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox

package mutant

// NativeSandboxOff, mutated: every sandboxed run's init is the Go one.
const NativeSandboxOff = true
