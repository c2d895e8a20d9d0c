//go:build !mutation_choresunjoined

package mutant

// ChoresUnjoined, when true: a sandboxed run's end does not wait for the sweeps started beside its command.
const ChoresUnjoined = false
