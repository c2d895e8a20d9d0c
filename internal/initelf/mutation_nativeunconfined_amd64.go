//go:build mutation_nativeunconfined

// Mutant: the native init confines no sandboxed command: no no_new_privs, capabilities kept, no Landlock, no seccomp filter.
// Guarantee: 8. confinement that holds (the native init confines as the Go init does)
// Caught: ./proc TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox

package initelf

// The native init, mutated: its confine returns success at once, having
// applied nothing (xor %eax,%eax; ret at its entry).
func init() {
	code = append([]byte(nil), code...)
	copy(code[confineAt:], []byte{0x31, 0xc0, 0xc3})
}
