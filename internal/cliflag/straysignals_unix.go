//go:build unix && !mutation_straysignals

package cliflag

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// CatchStraySignals catches, for the life of the process, StraySignals,
// which no handler of a command but timeout takes, so that none of them
// ends it with a stack dump; a server (serve, mcp, shell) drops SIGPIPE as
// well: a closed stderr must not end a service. corral's programs call it
// before a command runs, corral timeout excepted (it decides each signal
// itself).
func CatchStraySignals(server bool) {
	list := StraySignals
	if server {
		list = append(list[:len(list):len(list)], unix.SIGPIPE)
	}
	// Never read: the runtime drops a signal for a full channel rather
	// than block, so each is caught and dropped, with no goroutine.
	signal.Notify(make(chan os.Signal, 1), list...)
}
