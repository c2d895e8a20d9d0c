//go:build mutation_tokenmidexec

// Mutant: HasToken answers no for a tagged process caught in the middle
// of an execve, so a test's scan for what it left running can miss a
// process (a test of --leftovers detach failed so in CI) or count none
// left where one is.
// Guarantee: 2. nothing left behind (the tests' scans see every tagged process)
// Caught: ./internal/procfs TestHasTokenSeesAProcessThroughItsExecs

package mutant

// TokenMidExec, mutated: no waiting.
const TokenMidExec = true
