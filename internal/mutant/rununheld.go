//go:build !mutation_rununheld

package mutant

// RunUnheld, when true: corral run and corral timeout start their command without waiting for their signal handlers, which they install in the background.
const RunUnheld = false
