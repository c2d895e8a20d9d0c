//go:build mutation_nativenokill

// Mutant: the native init kills nothing its command left: not on Idle, Exit or end of file.
// Guarantee: 7. the tree dies with its supervisor
// Caught: ./proc TestSupervisorKilledTakesItsTreeWithIt
// Caught: ./proc TestRunEndsWithWhatLeftTheGroup

package initelf

// The native init, mutated: its kill_tree returns at once, having killed
// nothing (xor %eax,%eax; ret at its entry).
func init() {
	code = append([]byte(nil), code...)
	copy(code[killTreeAt:], []byte{0x31, 0xc0, 0xc3})
}
