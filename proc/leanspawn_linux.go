package proc

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
)

// A new process starts with a copy of its parent's descriptor table, and
// its exec closes every close-on-exec descriptor of the copy, one at a
// time: a supervisor holding 10,000 runs (a pidfd each, pipes) made each
// start close 10,000 descriptors or more in the child, so that the starts
// of n runs cost O(n²) (10,000 runs took 30 s to start, nine tenths of
// the machine's time in the kernel's close-on-exec pass). os/exec pays
// the same. Once the process holds many descriptors, starts are made
// from a thread of this package whose descriptor table is its own
// (close_range with CLOSE_RANGE_UNSHARE): it holds the standard streams,
// the Go runtime's poller descriptors at their own numbers, and, for the
// time of one start, the descriptors the child is given; the child's
// exec has nothing else to close.

// leanFrom is the descriptor number from which a start goes through the
// lean thread: a fresh descriptor gets the lowest free number, so one of
// a start's own descriptors at or above it means at least as many open.
const leanFrom = 256

// leanIdle is how long the lean thread outlives its last start, once few
// of the processes it started are left (leanKeep).
const leanIdle = 250 * time.Millisecond

// leanThreads is how many lean threads serve starts at once: a start
// holds its thread until the child's exec has replaced its memory (the
// fork is a vfork), so a single thread left cores idle while 10,000 runs
// started (a quarter of the machine's time).
func leanThreads() int {
	if mutant.LeanOneThread {
		return 1
	}
	return min(max(runtime.GOMAXPROCS(0), 1), 4)
}

var lean struct {
	mu       sync.Mutex
	reqs     chan *leanReq // nil while there are no threads
	quit     chan struct{}
	tids     []int // the threads'
	inflight int   // starts sent to, or being made by, the threads
	idle     *time.Timer
	broken   atomic.Bool // the threads could not be made here: starts are direct
	starts   atomic.Int64
}

// leanReady is what a lean thread reports once it is made.
type leanReady struct {
	tid int
	err error
}

type leanReq struct {
	path string
	args []string
	attr *syscall.ProcAttr
	pid  int
	err  error
	done chan struct{}
}

// startProcess is syscall.StartProcess. When attr.Sys asks for the pidfd
// of the new process, *attr.Sys.PidFD receives it either way (opened once
// the child exists, when the lean thread started it: the child is owned
// and unreaped, so its pid cannot have been reused).
func startProcess(path string, args []string, attr *syscall.ProcAttr) (int, error) {
	if !leanWanted(attr) {
		pid, _, err := syscall.StartProcess(path, args, attr)
		return pid, err
	}
	sys := *attr.Sys
	pidfd := sys.PidFD
	sys.PidFD = nil
	a := *attr
	a.Sys = &sys
	pid, err := leanStart(path, args, &a)
	if err != nil || pidfd == nil {
		return pid, err
	}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		unix.CloseOnExec(fd)
		*pidfd = fd
	}
	return pid, nil
}

// leanWanted reports whether a start of attr goes through the lean
// thread: the process holds many descriptors, the thread can be made,
// and the child does not depend on the thread that forks it (a
// parent-death signal fires when that thread ends).
func leanWanted(attr *syscall.ProcAttr) bool {
	if mutant.LeanSpawnOff || lean.broken.Load() || attr.Sys == nil || attr.Sys.Pdeathsig != 0 {
		return false
	}
	high := 0
	for _, fd := range attr.Files {
		if int(fd) > high {
			high = int(fd)
		}
	}
	if attr.Sys.UseCgroupFD && attr.Sys.CgroupFD > high {
		high = attr.Sys.CgroupFD
	}
	return high >= leanFrom
}

// leanStart starts a process from a lean thread, making the threads if
// there are none; where they cannot be made, the start is direct.
func leanStart(path string, args []string, attr *syscall.ProcAttr) (int, error) {
	lean.mu.Lock()
	if lean.reqs == nil && !leanMake() {
		lean.mu.Unlock()
		pid, _, err := syscall.StartProcess(path, args, attr)
		return pid, err
	}
	reqs := lean.reqs
	lean.inflight++ // leanStop keeps the threads while a start is in flight
	lean.mu.Unlock()
	r := &leanReq{path: path, args: args, attr: attr, done: make(chan struct{})}
	reqs <- r
	<-r.done
	lean.mu.Lock()
	lean.inflight--
	lean.idle.Reset(leanIdle)
	lean.mu.Unlock()
	lean.starts.Add(1)
	return r.pid, r.err
}

// leanMake makes the lean threads, with lean.mu held; where one cannot be
// made, it ends those that were and marks the threads broken.
func leanMake() bool {
	reqs, quit, ready := make(chan *leanReq), make(chan struct{}), make(chan leanReady)
	n := leanThreads()
	for range n {
		go leanThread(reqs, quit, ready)
	}
	var tids []int
	var failed error
	for range n {
		if r := <-ready; r.err != nil {
			failed = r.err
		} else {
			tids = append(tids, r.tid)
		}
	}
	if failed != nil {
		close(quit)
		lean.broken.Store(true)
		return false
	}
	lean.reqs, lean.quit, lean.tids = reqs, quit, tids
	if lean.idle == nil {
		lean.idle = time.AfterFunc(leanIdle, leanStop)
	}
	return true
}

// leanStop ends the lean thread once it has been idle for leanIdle,
// unless more than leanKeep of its children are left. A thread's children
// pass, when it ends, to the first live thread of the process, the main
// thread, whose list of children reaper.Orphans reads at every run's end
// for the tree's orphans: 10,000 runs handed to it made each end read
// 10,000 pids (a third of the supervisor's CPU at 3,000 runs), so the
// thread stays while many live. A few (idle inits, which live on) cost
// each read little.
func leanStop() {
	lean.mu.Lock()
	defer lean.mu.Unlock()
	if lean.reqs == nil {
		return
	}
	if lean.inflight > 0 || !mutant.LeanEndsWithChildren && leanChildren() > leanKeep {
		lean.idle.Reset(leanIdle)
		return
	}
	close(lean.quit)
	lean.reqs, lean.quit, lean.tids = nil, nil, nil
}

// leanChildren counts the lean threads' children, up to leanKeep+1.
func leanChildren() int {
	n := 0
	for _, tid := range lean.tids {
		n += threadChildren(tid, leanKeep+1-n)
		if n > leanKeep {
			break
		}
	}
	return n
}

// leanKeep is how many children the lean thread may hand to the main
// thread when it ends.
const leanKeep = 64

// threadChildren counts the children of this process's thread tid, live
// or unreaped, up to atMost: the first bytes of its list, which the
// kernel gives without walking the rest.
func threadChildren(tid, atMost int) int {
	fd, err := unix.Open("/proc/self/task/"+strconv.Itoa(tid)+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	b := make([]byte, 12*atMost) // a pid and a space: 8 bytes at most
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	return min(strings.Count(string(b[:n]), " "), atMost)
}

// leanThread is the lean thread: it makes its descriptor table its own,
// then serves starts until told to quit. Its goroutine never unlocks the
// thread, so the thread, and its table, end with it; the Go runtime makes
// no thread from a locked one (its template thread does), so no other
// goroutine ever runs with this table. The loop waits on channels only:
// a timer of this goroutine could make the runtime write to its poller's
// eventfd from this thread, which is why that descriptor is kept at its
// number.
func leanThread(reqs chan *leanReq, quit chan struct{}, ready chan leanReady) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread, whose table is the process's: the lean
		// thread is another, started while this one is held.
		held := make(chan leanReady)
		go leanThread(reqs, quit, held)
		r := <-held
		runtime.UnlockOSThread()
		ready <- r
		return
	}
	self, err := leanTable()
	ready <- leanReady{tid: unix.Gettid(), err: err}
	if err != nil {
		return
	}
	for {
		select {
		case r := <-reqs:
			r.pid, r.err = leanFork(self, r)
			close(r.done)
		case <-quit:
			return
		}
	}
}

// leanTable gives this thread a descriptor table of its own holding the
// standard streams and the runtime's eventfd and epoll descriptors (with
// those of the program, which cannot be told apart and cost nothing to
// keep) at their numbers, and returns a pidfd of this process in it.
func leanTable() (self int, err error) {
	ents, err := os.ReadDir("/proc/thread-self/fd")
	if err != nil {
		return -1, err
	}
	var keep []int
	high := 2
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 3 {
			continue
		}
		if l, err := os.Readlink("/proc/thread-self/fd/" + e.Name()); err == nil && (strings.HasSuffix(l, "[eventfd]") || strings.HasSuffix(l, "[eventpoll]")) {
			keep = append(keep, n)
			high = max(high, n)
		}
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_UNSHARE); err != nil {
		return -1, err
	}
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return -1, err
	}
	self = high + 1
	if fd != self {
		if err := unix.Dup3(fd, self, unix.O_CLOEXEC); err != nil {
			return -1, err
		}
		unix.Close(fd)
	}
	for _, k := range keep {
		// pidfd_getfd reads the process's table (its leader's), which
		// this thread no longer shares.
		fd, err := unix.PidfdGetfd(self, k, 0)
		if err != nil {
			return -1, err
		}
		if fd != k {
			if err := unix.Dup3(fd, k, unix.O_CLOEXEC); err != nil {
				return -1, err
			}
			unix.Close(fd)
		}
	}
	return self, nil
}

// leanFork starts r from this thread: the descriptors it names are
// fetched from the process's table for the time of the start.
func leanFork(self int, r *leanReq) (int, error) {
	attr := *r.attr
	sys := *attr.Sys
	attr.Sys = &sys
	var got []int
	defer func() {
		for _, fd := range got {
			unix.Close(fd)
		}
	}()
	fetch := func(fd int) (int, error) {
		if fd < 0 {
			return fd, nil
		}
		n, err := unix.PidfdGetfd(self, fd, 0)
		if err != nil {
			return -1, err
		}
		got = append(got, n)
		return n, nil
	}
	attr.Files = make([]uintptr, len(r.attr.Files))
	for i, fd := range r.attr.Files {
		n, err := fetch(int(fd))
		if err != nil {
			return 0, err
		}
		attr.Files[i] = uintptr(n)
	}
	if sys.UseCgroupFD {
		n, err := fetch(sys.CgroupFD)
		if err != nil {
			return 0, err
		}
		sys.CgroupFD = n
	}
	path := r.path
	if fd, ok := procSelfFD(path); ok && !mutant.LeanMemfdPathKept {
		// A program in a memory file (the native init) is executed by its
		// descriptor, which must be in this thread's table too.
		n, err := fetch(fd)
		if err != nil {
			return 0, err
		}
		path = "/proc/self/fd/" + strconv.Itoa(n)
	}
	pid, _, err := syscall.StartProcess(path, r.args, &attr)
	return pid, err
}

// procSelfFD returns N of a path /proc/self/fd/N.
func procSelfFD(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/proc/self/fd/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}
