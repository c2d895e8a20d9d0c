//go:build !mutation_noconncheck

package mutant

// NoConnCheck: see mutation_noconncheck.go.
const NoConnCheck = false
