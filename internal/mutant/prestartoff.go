//go:build !mutation_prestartoff

package mutant

// PrestartOff, when true: no init is started ahead, so each of a burst of starts on an init's tier waits for a Go program's start.
const PrestartOff = false
