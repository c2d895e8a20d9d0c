//go:build !mutation_guardoff

package mutant

// GuardOffByDefault: see mutation_guardoff.go.
const GuardOffByDefault = false
