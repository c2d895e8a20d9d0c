//go:build !mutation_apienvvalues

package mutant

// APISendsEnvValues: see mutation_apienvvalues.go.
const APISendsEnvValues = false
