//go:build !mutation_overrunfinishes

package mutant

// OverrunFinishes: see mutation_overrunfinishes.go.
const OverrunFinishes = false
