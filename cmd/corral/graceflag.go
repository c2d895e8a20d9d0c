package main

import (
	"flag"
	"time"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/proc"
)

// graceFlag registers --grace on fs, with the one meaning it has in every
// command of corral: the time between the stop signal and SIGKILL,
// proc.DefaultGrace unless given, and 0 for none (SIGKILL at once). The
// returned function gives the value as proc.Spec.Grace and the layers
// above it take it (negative for none). A negative --grace is refused.
func graceFlag(fs *flag.FlagSet, what string) func() time.Duration {
	d := nonNegDuration(fs, "grace", proc.DefaultGrace, "`DUR` between the stop signal and SIGKILL "+what+" (0: SIGKILL at once)")
	return func() time.Duration { return negIfZero(*d) }
}

// negIfZero maps a zero, as a person types it, to the negative duration
// that means none to the libraries (where zero means the default).
var negIfZero = cliflag.NegIfZero
