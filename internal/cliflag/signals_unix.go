//go:build unix

package cliflag

import (
	"os"

	"golang.org/x/sys/unix"
)

// StopSignals are the signals that stop a command gracefully.
var StopSignals = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP}

// StraySignals are the signals every command but timeout catches and
// drops, so that none of them ends it with the Go runtime's stack dump;
// a server (serve, mcp, shell) drops SIGPIPE as well.
var StraySignals = []os.Signal{unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM}
