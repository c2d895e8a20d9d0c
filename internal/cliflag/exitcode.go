package cliflag

// Exit statuses shared by the commands that run something (run, timeout,
// headless, shell) and by corral's programs when they fail themselves,
// as GNU timeout uses them.
const (
	ExitTimedOut      = 124
	ExitCorralFailed  = 125
	ExitNotExecutable = 126
	ExitNotFound      = 127
)
