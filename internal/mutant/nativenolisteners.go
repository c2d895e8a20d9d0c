//go:build !mutation_nativenolisteners

package mutant

// NativeNoListeners, when true: the native init's plan makes no listener: a sandbox with --allow-host reaches neither its proxy nor its host loopback ports.
const NativeNoListeners = false
