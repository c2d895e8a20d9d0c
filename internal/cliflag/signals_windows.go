package cliflag

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop a command gracefully.
var StopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM}

// CatchStraySignals: Windows has no SIGQUIT or job control, nothing to
// catch beyond what each command asks for.
func CatchStraySignals(bool) {}
