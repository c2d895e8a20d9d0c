//go:build !mutation_norestore

package mutant

// NoRestore: see mutation_norestore.go.
const NoRestore = false
