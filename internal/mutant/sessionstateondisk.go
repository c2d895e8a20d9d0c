//go:build !mutation_sessionstateondisk

package mutant

// SessionStateOnDisk, when true, keeps a sandboxed session's state in the
// user's cache directory even where plain sessions keep theirs in memory.
const SessionStateOnDisk = false
