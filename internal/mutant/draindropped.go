//go:build !mutation_draindropped

package mutant

// DrainDropped, when true: the output drain after the main process exits is dropped: what leftovers print then is lost.
const DrainDropped = false
