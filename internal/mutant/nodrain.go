//go:build !mutation_nodrain

package mutant

// NoDrain: see mutation_nodrain.go.
const NoDrain = false
