//go:build !mutation_drainunsettled

package mutant

// DrainUnsettled, when true: a drain shorter than a second locks corral's own clock at once, without first waiting on the runtime's timer for pipes that end with the main process.
const DrainUnsettled = false
