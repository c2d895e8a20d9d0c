// Package reaper makes the process a child subreaper and reaps the orphans
// that corral's runs leave behind, and only those.
//
// As a subreaper, this process inherits every orphan of its descendants.
// Each run registers a Claim that recognises its own orphans; a goroutine,
// alive while any claim is registered, reaps claimed zombies whenever a
// SIGCHLD arrives. Zombies no claim recognises are never reaped here, so a
// child that other code in this process waits for keeps its exit status.
package reaper

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// A Claim reports whether a process that is now a child of this process
// belongs to a run (and may be signalled and reaped on its behalf).
type Claim func(procfs.Stat) bool

type entry struct {
	claim    Claim
	finished func() bool
}

var (
	enableOnce sync.Once
	enableErr  error

	mu      sync.Mutex
	claims  = map[int]entry{}
	nextID  int
	running bool
	stop    chan struct{}
	done    chan struct{}
)

// Enable makes this process a child subreaper (PR_SET_CHILD_SUBREAPER),
// once. The setting is process-wide and stays for the process's life.
func Enable() error {
	enableOnce.Do(func() {
		enableErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return enableErr
}

// Register adds a claim and returns the function that removes it. While at
// least one claim is registered a goroutine reaps claimed zombies on every
// SIGCHLD; it exits when the last claim is removed.
func Register(c Claim) (unregister func()) {
	id := add(entry{claim: c})
	return func() { remove(id) }
}

// RegisterUntil adds a claim that stays until finished reports true, checked
// after every reaping pass. It serves trees left running on purpose: their
// orphans are still reaped when they exit, and the claim goes with the last.
func RegisterUntil(c Claim, finished func() bool) {
	add(entry{claim: c, finished: finished})
}

func add(e entry) int {
	mu.Lock()
	defer mu.Unlock()
	nextID++
	claims[nextID] = e
	if !running {
		running = true
		stop, done = make(chan struct{}), make(chan struct{})
		go loop(stop, done)
	}
	return nextID
}

func remove(id int) {
	mu.Lock()
	delete(claims, id)
	var s, d chan struct{}
	if len(claims) == 0 && running {
		running = false
		s, d = stop, done
	}
	mu.Unlock()
	if s != nil {
		close(s)
		<-d
	}
}

// expire removes the claims whose finished func reports true. It runs on
// the reaping goroutine, so it must not wait for that goroutine to stop.
func expire() {
	mu.Lock()
	var ids []int
	for id, e := range claims {
		if e.finished != nil && e.finished() {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		delete(claims, id)
	}
	if len(claims) == 0 && running {
		running = false
		close(stop)
	}
	mu.Unlock()
}

func loop(stop, done chan struct{}) {
	defer close(done)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGCHLD)
	defer signal.Stop(ch)
	Reap(nil)
	for {
		select {
		case <-stop:
			return
		case <-ch:
			Reap(nil)
			expire()
		}
	}
}

// Reap reaps every zombie child of this process that extra or a registered
// claim recognises, and returns how many it reaped.
func Reap(extra Claim) int {
	n := 0
	for _, st := range Children() {
		if !st.Zombie() {
			continue
		}
		if !claimed(st, extra) {
			continue
		}
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(st.Pid, &ws, unix.WNOHANG, nil); err == nil && pid == st.Pid {
			n++
		}
	}
	return n
}

func claimed(st procfs.Stat, extra Claim) bool {
	if extra != nil && extra(st) {
		return true
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range claims {
		if e.claim(st) {
			return true
		}
	}
	return false
}

// Children returns the stat of every child of this process, live or
// zombie. It reads /proc/self/task/*/children where the kernel offers it and
// falls back to scanning /proc.
func Children() []procfs.Stat {
	self := os.Getpid()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err == nil && len(tasks) > 0 {
		var out []procfs.Stat
		ok := true
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				if os.IsNotExist(err) {
					continue // thread exited
				}
				ok = false
				break
			}
			for _, f := range bytes.Fields(b) {
				pid, err := strconv.Atoi(string(f))
				if err != nil {
					continue
				}
				if st, err := procfs.ReadStat(pid); err == nil && st.PPid == self {
					out = append(out, st)
				}
			}
		}
		if ok {
			return out
		}
	}
	all, _ := procfs.Scan()
	var out []procfs.Stat
	for _, st := range all {
		if st.PPid == self {
			out = append(out, st)
		}
	}
	return out
}
