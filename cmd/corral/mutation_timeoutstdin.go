//go:build mutation_timeoutstdin

// Mutant: corral timeout's command reads the null device, not the caller's stdin.
// Guarantee: 5. no inherited surprises (stdin as asked: timeout passes its own)
// Caught: ./cmd/corral TestTimeoutPassesStdinThrough

package main

import "os"

// timeoutStdio, mutated for the CI's mutation step (.ci/mutations): stdin
// is not passed through. Built only with the tag mutation_timeoutstdin.
func timeoutStdio() *[3]*os.File { return &[3]*os.File{nil, os.Stdout, os.Stderr} }

func init() { mutationTags = append(mutationTags, "mutation_timeoutstdin") }
