//go:build !mutation_nativeoffonanyrefusal

package mutant

// NativeOffOnAnyRefusal, when true, turns the native init off for good
// at the first start refused with EACCES, EPERM or ENOEXEC, before the Go
// init has shown that the refusal was the memory file's.
const NativeOffOnAnyRefusal = false
