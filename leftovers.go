package corral

import "fmt"

// Leftovers says what happens to processes of a run that are still alive
// when its main process has exited.
type Leftovers string

const (
	// LeftoversKill (the zero value) tears the rest of the tree down after the
	// output drain: SIGTERM, the grace period, then SIGKILL.
	LeftoversKill Leftovers = ""

	// LeftoversWait keeps the run open until every process of the tree has
	// exited or the timeout fires, capturing their output meanwhile.
	LeftoversWait Leftovers = "wait"

	// LeftoversDetach leaves the remaining processes running and returns.
	// Their pipes to the supervisor are closed, so a detached process that
	// writes to its inherited stdout or stderr gets EPIPE (or SIGPIPE).
	LeftoversDetach Leftovers = "detach"
)

// String returns the policy's name; the zero value prints as "kill".
func (l Leftovers) String() string {
	if l == LeftoversKill {
		return "kill"
	}
	return string(l)
}

// ParseLeftovers parses "kill", "wait" or "detach".
func ParseLeftovers(s string) (Leftovers, error) {
	switch s {
	case "kill", "":
		return LeftoversKill, nil
	case "wait":
		return LeftoversWait, nil
	case "detach":
		return LeftoversDetach, nil
	}
	return "", fmt.Errorf("unknown leftovers policy %q: want kill, wait or detach", s)
}
