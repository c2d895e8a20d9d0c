//go:build !mutation_logkept

package mutant

// LogKept, when true, keeps a run's log file open between the batches
// written to it.
const LogKept = false
