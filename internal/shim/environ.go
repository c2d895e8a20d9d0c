package shim

import "os"

// Environ returns the whole environment of a shim of role: nothing of the
// supervisor's but what the shim needs, plus extra. In a binary built
// with the race detector (a test binary) it also tells the detector's
// runtime not to sleep at exit, which it does for a second by default:
// every init whose exit corral waits for would take that second.
func Environ(role string, extra ...string) []string {
	// One processor: a shim's work is one goroutine at a time, and each
	// processor more is a thread more to wake and to switch.
	env := append([]string{RoleEnv + "=" + role, "GOMAXPROCS=1"}, extra...)
	if raceEnabled {
		env = append(env, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	}
	return env
}
