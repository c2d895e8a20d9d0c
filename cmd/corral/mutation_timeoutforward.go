//go:build mutation_timeoutforward

// Mutant: corral timeout drops the signals it gets instead of passing them on.
// Guarantee: corral timeout: signals sent to timeout reach the command as themselves
// Caught: ./cmd/corral TestTimeoutForwardsSignals

package main

import "syscall"

// forward, mutated for the CI's mutation step (.ci/mutations): the signal
// is dropped. Built only with the tag mutation_timeoutforward.
func (t *timeoutRun) forward(syscall.Signal) {}

func init() { mutationTags = append(mutationTags, "mutation_timeoutforward") }
