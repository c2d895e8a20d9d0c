//go:build mutation_timeouttree

// Mutant: at the timeout corral timeout signals the command alone, as GNU does, not its tree.
// Guarantee: 2. nothing left behind (corral timeout: the whole tree at the timeout)
// Caught: ./cmd/corral TestTimeoutKillsSetsidEscapeeAtTheTimeout/cgroup
// Caught: ./cmd/corral TestTimeoutKillsSetsidEscapeeAtTheTimeout/subreaper

package main

import "syscall"

// signalTree, mutated for the CI's mutation step (.ci/mutations): only the
// main process is signalled. Built only with the tag mutation_timeouttree.
func (t *timeoutRun) signalTree(sig syscall.Signal) error { return t.p.Signal(sig) }

func init() { mutationTags = append(mutationTags, "mutation_timeouttree") }
