//go:build !mutation_nativesandboxoff

package mutant

// NativeSandboxOff, when true: every sandboxed run's init is the Go one, the native init serving plain runs only.
const NativeSandboxOff = false
