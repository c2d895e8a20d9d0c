//go:build !mutation_noceiling

package mutant

// NoCeiling: see mutation_noceiling.go.
const NoCeiling = false
