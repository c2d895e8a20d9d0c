//go:build mutation_sessionstateondisk

// Mutant: a sandboxed session keeps its state in the user's cache
// directory, which every sandbox shows read-only: one sandboxed session's
// commands read another's exported secrets (and each command pays a disk
// file system's writes).
// Guarantee: sandboxed sessions see only their own state
// Caught: ./shell TestSandboxedSessionStateIsInMemoryAndItsOwn

package mutant

// SessionStateOnDisk, mutated: the state goes to the cache directory.
const SessionStateOnDisk = true
