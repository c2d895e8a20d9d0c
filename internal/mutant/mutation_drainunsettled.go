//go:build mutation_drainunsettled

// Mutant: a drain shorter than a second locks corral's own clock at once, without first waiting on the runtime's timer for pipes that end with the main process.
// Guarantee: a run whose pipes end with its main process takes no thread of its own to end (docs/benchmarks.md, stop 44)
// Caught: ./proc TestRunEndingWithItsPipesTakesNoThread

package mutant

// DrainUnsettled, mutated: a drain shorter than a second locks corral's own clock at once, without first waiting on the runtime's timer for pipes that end with the main process.
const DrainUnsettled = true
