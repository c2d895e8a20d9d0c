//go:build !mutation_oversizedid

package mutant

// OversizedIDDropped, when true, answers a stdio message past the size
// limit with a null id, as before its id was read.
const OversizedIDDropped = false
