package main

import (
	"errors"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/proc"
)

// Exit statuses shared by the commands that run something, as GNU timeout
// uses them (internal/cliflag).
const (
	exitTimedOut      = cliflag.ExitTimedOut
	exitCorralFailed  = cliflag.ExitCorralFailed
	exitNotExecutable = cliflag.ExitNotExecutable
	exitNotFound      = cliflag.ExitNotFound
)

// startFailure maps an error from starting a command to an exit status.
func startFailure(err error) int {
	switch {
	case errors.Is(err, proc.ErrNotFound):
		return exitNotFound
	case errors.Is(err, proc.ErrNotExecutable):
		return exitNotExecutable
	}
	return exitCorralFailed
}
