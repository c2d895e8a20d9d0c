//go:build !mutation_scriptkept

package mutant

// ScriptKept, when true: the service keeps a shell task's script open for the run's life.
const ScriptKept = false
