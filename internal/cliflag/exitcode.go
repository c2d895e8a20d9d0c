package cliflag

import (
	"errors"

	"github.com/corralrun/corral/proc"
)

// Exit statuses shared by the commands that run something (run, timeout,
// headless, shell) and by corral's programs when they fail themselves,
// as GNU timeout uses them.
const (
	ExitTimedOut      = 124
	ExitCorralFailed  = 125
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// StartFailure maps an error from starting a command to an exit status:
// 127 for a command not found, 126 for one not executable, else 125.
func StartFailure(err error) int {
	switch {
	case errors.Is(err, proc.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, proc.ErrNotExecutable):
		return ExitNotExecutable
	}
	return ExitCorralFailed
}
