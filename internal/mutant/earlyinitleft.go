//go:build !mutation_earlyinitleft

package mutant

// EarlyInitLeft, when true: a sandbox's init forked while its box was made is left alive when the box cannot be made.
const EarlyInitLeft = false
