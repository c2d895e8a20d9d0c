// Package recovery decides which workers are dead and which recorded
// process trees this machine may kill: a worker on this machine and boot
// is dead the moment its process (pid and start time) is gone; a worker
// elsewhere is dead when its lease (heartbeat) has expired.
package recovery

import (
	"os"
	"time"

	"github.com/corralrun/corral/store"
)

// Identity is this worker's machine, boot and process.
type Identity struct {
	Host     string
	BootID   string
	Pid      int
	PidStart uint64
}

// Self returns the identity of the calling process.
func Self() Identity {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return Identity{Host: host, BootID: bootID(), Pid: pid, PidStart: pidStart(pid)}
}

// SameMachine reports whether w ran on this machine in this boot, so that
// its recorded pids and cgroups mean the same here.
func (id Identity) SameMachine(w *store.Worker) bool {
	return w.Host == id.Host && id.BootID != "" && w.BootID == id.BootID
}

// Dead reports whether worker w is gone: on this machine, its process is
// gone (or the pid was reused); anywhere, its lease has expired, even if
// its process lives (frozen, or cut from the database: it fences itself).
func (id Identity) Dead(w *store.Worker, now time.Time, lease time.Duration) bool {
	if id.SameMachine(w) && w.PidStart != 0 {
		if w.Pid == id.Pid && w.PidStart == id.PidStart {
			return false
		}
		if pidStart(w.Pid) != w.PidStart {
			return true
		}
	}
	if w.Host == id.Host && w.BootID != "" && id.BootID != "" && w.BootID != id.BootID {
		return true // this machine rebooted since: everything it ran is gone
	}
	return now.Sub(w.Heartbeat) > lease
}

// Alive reports whether the process pid started at start (clock ticks)
// still runs on this machine. Without /proc it answers true.
func Alive(pid int, start uint64) bool {
	if start == 0 {
		return true
	}
	return pidStart(pid) == start
}
