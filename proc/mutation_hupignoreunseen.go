//go:build mutation_hupignoreunseen

// Mutant: the supervisor reads only os/signal's word on SIGHUP and SIGINT,
// not the kernel's: a command started through an init no longer inherits
// a SIGHUP that the supervisor (nohup'd, after a Notify of SIGHUP stopped)
// still ignores, where a direct child would.
// Guarantee: 5. no inherited surprises (signal dispositions)
// Caught: ./proc TestCommandsStartWithTheSignalsADirectChildWould

package proc

import "syscall"

// kernelIgnores, mutated: never asks the kernel.
func kernelIgnores(syscall.Signal) bool { return false }
