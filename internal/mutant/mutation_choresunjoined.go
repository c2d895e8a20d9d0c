//go:build mutation_choresunjoined

// Mutant: a sandboxed run's end does not wait for the sweeps started beside its command.
// Guarantee: no goroutine a run starts outlives its Wait (DESIGN: no goroutine outlives its owner)
// Caught: ./proc TestSandboxedRunEndsAfterItsChores

package mutant

// ChoresUnjoined, mutated: a sandboxed run's end does not wait for the sweeps started beside its command.
const ChoresUnjoined = true
