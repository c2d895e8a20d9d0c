// Package statedir makes the directories where shell sessions keep their
// state and the shell tool keeps full outputs and job logs: private to
// their user (0700), named for the process that owns them, and reaped once
// that process is gone.
//
// A session's state holds its variables, exported secrets included, and a
// job's log holds all it printed: they must not outlive their owner. The
// owner removes them when it ends; when it was killed (SIGKILL, a crash),
// the next process to make one reaps them. A directory's name says who
// owns it: the pid namespace, the pid and the start time of the owning
// process (prefix + "NS.PID.START-" + random), so that a pid the kernel
// gave to another process since, or a process in another pid namespace
// sharing the directory, never passes for the owner: a live owner's state
// is never removed. Directories of other users, and names that say no
// owner (those of older versions), are left alone.
package statedir

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Make creates a directory in base, private to its user (mode 0700), whose
// name starts with prefix and names this process as its owner.
func Make(base, prefix string) (string, error) {
	return os.MkdirTemp(base, prefix+self().tag()+"*")
}

// owner names a process: its pid namespace, its pid and its start time
// (zero where the platform does not say).
type owner struct {
	ns    uint64
	pid   int
	start uint64
}

func (o owner) tag() string { return fmt.Sprintf("%d.%d.%d-", o.ns, o.pid, o.start) }

// self is this process, read on first use (a few system calls that a
// command without a session does not pay at start).
var self = sync.OnceValue(current)

// parse reads the owner from a directory name without its prefix.
func parse(rest string) (owner, bool) {
	tag, _, ok := strings.Cut(rest, "-")
	if !ok {
		return owner{}, false
	}
	f := strings.Split(tag, ".")
	if len(f) != 3 {
		return owner{}, false
	}
	ns, err1 := strconv.ParseUint(f[0], 10, 64)
	pid, err2 := strconv.Atoi(f[1])
	start, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return owner{}, false
	}
	return owner{ns: ns, pid: pid, start: start}, true
}
