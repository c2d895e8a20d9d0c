//go:build !mutation_noconnbound

package mutant

// NoConnBound: see mutation_noconnbound.go.
const NoConnBound = false
