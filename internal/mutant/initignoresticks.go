//go:build !mutation_initignoresticks

package mutant

// InitIgnoreSticks, when true: an init that ignored a signal for one
// command (one corral ignored) leaves it ignored for every later command
// it starts, though corral no longer ignores it.
const InitIgnoreSticks = false
