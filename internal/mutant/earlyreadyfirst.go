//go:build !mutation_earlyreadyfirst

package mutant

// EarlyReadyFirst, when true: the signals corral run begins to catch as it starts are reported caught before they are.
const EarlyReadyFirst = false
