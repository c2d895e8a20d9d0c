//go:build mutation_timeoutkill124

// Mutant: a command that timed out and was SIGKILLed exits 124, not 137.
// Guarantee: 6. honest results (corral timeout: GNU's exit statuses)
// Caught: ./cmd/corral TestTimeoutExitStatuses/kill_signal
// Caught: ./cmd/corral TestTimeoutExitStatuses/kill_after

package main

import "syscall"

// tellsKillFromTimeout, mutated for the CI's mutation step
// (.ci/mutations). Built only with the tag mutation_timeoutkill124.
func tellsKillFromTimeout(syscall.Signal) bool { return false }

func init() { mutationTags = append(mutationTags, "mutation_timeoutkill124") }
