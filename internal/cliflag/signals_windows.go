package cliflag

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop a command gracefully.
var StopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM}
