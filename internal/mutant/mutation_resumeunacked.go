//go:build mutation_resumeunacked

// Mutant: the Go init that takes a run over from the native init (at the gate's first connect) forgets that corral acknowledged the command's pid, and reaps nothing until corral speaks again.
// Guarantee: 1. bounded return (a sandboxed run whose command connects a Unix socket ends when its command does)
// Caught: ./proc TestNativeSandboxHandsItsGateToTheGoInit

package mutant

// ResumeUnacked, mutated: the Go init that takes a run over forgets the acknowledgement.
const ResumeUnacked = true
