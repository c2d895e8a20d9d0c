//go:build !mutation_tokenmidexec

package mutant

// TokenMidExec, when true: procfs.HasToken answers no for a process in the
// middle of an execve, whose command line and environment read empty for
// that moment, instead of waiting it out.
const TokenMidExec = false
