//go:build unix && !mutation_timeoutkill124

package main

import "syscall"

// tellsKillFromTimeout says whether a command that timed out and died of
// sig exits 128+sig rather than 124: SIGKILL (137), as GNU timeout does,
// so that a caller can tell a command killed after -k, or by -s KILL,
// from one that ended on the timeout's signal.
func tellsKillFromTimeout(sig syscall.Signal) bool { return sig == syscall.SIGKILL }
