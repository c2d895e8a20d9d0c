//go:build unix && !mutation_straysignals

package main

import (
	"github.com/corralrun/corral/internal/cliflag"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// straySignals are caught by every subcommand but timeout, which decides
// each signal itself.
var straySignals = cliflag.StraySignals

// serverCommands also drop SIGPIPE: a closed stderr must not end a service.
var serverCommands = map[string]bool{"serve": true, "mcp": true, "shell": true}

// catchStraySignals catches, for the life of the process, the signals
// that no handler of command name takes, so that none of them ends it
// with a stack dump.
func catchStraySignals(name string) {
	if name == "timeout" {
		return
	}
	list := straySignals
	if serverCommands[name] {
		list = append(list[:len(list):len(list)], unix.SIGPIPE)
	}
	// Never read: the runtime drops a signal for a full channel rather
	// than block, so each is caught and dropped, with no goroutine.
	signal.Notify(make(chan os.Signal, 1), list...)
}
