//go:build !mutation_retryall

package mutant

// RetryAll: see mutation_retryall.go.
const RetryAll = false
