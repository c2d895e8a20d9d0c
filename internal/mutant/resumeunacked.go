//go:build !mutation_resumeunacked

package mutant

// ResumeUnacked, when true: the Go init that takes a run over from the native init (at the gate's first connect) forgets that corral acknowledged the command's pid, and reaps nothing until corral speaks again.
const ResumeUnacked = false
