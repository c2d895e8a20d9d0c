package main

import "github.com/corralrun/corral/internal/cliflag"

// Exit statuses shared by the commands that run something, as GNU timeout
// uses them (internal/cliflag).
const (
	exitTimedOut      = cliflag.ExitTimedOut
	exitCorralFailed  = cliflag.ExitCorralFailed
	exitNotExecutable = cliflag.ExitNotExecutable
	exitNotFound      = cliflag.ExitNotFound
)

// startFailure maps an error from starting a command to an exit status.
var startFailure = cliflag.StartFailure
