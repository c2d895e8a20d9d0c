//go:build mutation_nativegatehandsall

// Mutant: the native init answers no gated connect itself: every one, a failed lookup too, hands the run to the Go init.
// Guarantee: start-up: a sandboxed command whose connects the gate answers at once (a user lookup, a refused socket, a non-blocking TCP connect) keeps the native init (issue 27)
// Caught: ./proc TestNativeSandboxHandsItsGateToTheGoInit

package initelf

// The native init, mutated: its gate_answer returns -1 at once, having
// taken nothing (mov $-1,%eax; ret at its entry), as if no call waited:
// the run goes to the Go init, which takes the call itself.
func init() {
	code = append([]byte(nil), code...)
	copy(code[gateAnswerAt:], []byte{0xb8, 0xff, 0xff, 0xff, 0xff, 0xc3})
}
