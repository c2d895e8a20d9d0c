//go:build unix

package main

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cliflag"
)

// catchStraySignals catches and drops, for the life of the service, the
// signals corral's server commands drop (internal/cliflag), SIGPIPE
// among them: none ends the service with a stack dump.
func catchStraySignals() {
	signal.Notify(make(chan os.Signal, 1), append(cliflag.StraySignals[:len(cliflag.StraySignals):len(cliflag.StraySignals)], unix.SIGPIPE)...)
}
