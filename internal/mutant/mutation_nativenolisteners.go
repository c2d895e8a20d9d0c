//go:build mutation_nativenolisteners

// Mutant: the native init's plan makes no listener: a sandbox with --allow-host reaches neither its proxy nor its host loopback ports.
// Guarantee: 8. confinement that holds, and lets through what is allowed (the native init makes the Go init's listeners)
// Caught: ./proc TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox
// Caught: ./proc TestSandboxReachesTheAllowedHostLoopbackPortOnly

package mutant

// NativeNoListeners, mutated: no listener in the native init's plan.
const NativeNoListeners = true
