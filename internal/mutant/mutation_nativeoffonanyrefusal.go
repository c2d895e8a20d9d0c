//go:build mutation_nativeoffonanyrefusal

// Mutant: one init start refused with EACCES, EPERM or ENOEXEC, for a
// reason of its own (its cgroup placement), turns the native init off for
// the rest of the process: every later plain run gets the Go init.
// Guarantee: 7. the tree dies with its supervisor (the native init holds plain runs)
// Caught: ./proc TestARefusedNativeInitFallsBackOnlyWhenTheGoInitStarts

package mutant

// NativeOffOnAnyRefusal, mutated: off at once.
const NativeOffOnAnyRefusal = true
