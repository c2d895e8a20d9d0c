package proc

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/shim"
)

// initChild is a run whose tree an init holds (see internal/shim): every
// sandboxed run, and plain runs of the subreaper and process-group tiers.
type initChild struct {
	tier   corral.Containment
	why    string
	limits string
	bound  string

	ctl       *shim.Conn
	init      int      // the init's pid, in this pid namespace
	initStart uint64   // its start time
	initFD    *os.File // pidfd of the init
	ownInit   bool     // the init is this process's child, to reap
	pidns     bool     // the init is pid 1 of a pid namespace

	pid   int      // the command
	start uint64   // its start time
	pidfd *os.File // its pidfd

	tree tree         // the command's tree, below the init
	leaf *cgroup.Leaf // cgroup tier: the leaf the init was born in

	detachErr string        // why detached processes end with this process
	box       *box          // a one-shot sandbox: released with the run
	chores    chan struct{} // closed when the sweeps started with the run are done
	encl      *Enclosure    // the enclosure the run is in
	mechs     []string
	abi       int
	report    *corral.SandboxReport // set by finish

	unbind   func()        // when the init is reaped: it was forked by the spawner
	poolKey  string        // the user it runs as, for the pool of idle inits
	poolable bool          // a plain init, which may serve another run
	state    uint64        // inheritedState when a plain init was started
	native   bool          // the init is the native one (internal/initelf)
	reused   bool          // the init served a run before (it sent its own pidfd then)
	exit     chan struct{} // closed when the command has exited
	status   exitStatus    // set before exit is closed
	alone    atomic.Bool   // nothing else of the tree was left when it exited
	settled  time.Duration // finish's wait for the init to kill what was left
	left     int           // the processes the init killed because the command left them
	kernel   func(func())  // makes a call the kernel may block (see kernelTimer)
	reader   chan struct{} // closed when the control reader is done
	stopOnce sync.Once
}

// read follows the init's reports until its end closes.
func (c *initChild) read() {
	defer close(c.reader)
	for {
		m, files, err := c.ctl.Recv()
		shimCloseAll(files)
		if err != nil {
			break
		}
		if m.Op == shim.OpExited {
			c.status = exitStatus{exited: true, code: m.Code, signal: syscall.Signal(m.Signal)}
			if m.Signal != 0 {
				c.status.code = -1
			}
			c.alone.Store(m.Alone)
			c.markExited()
			// The init says nothing more of this run unless asked: its
			// answer to Idle (release waits for it itself), or the next
			// run's words on the same socket.
			break
		}
	}
	// The init is gone, or release closed corral's end. If the command
	// still runs, its exit is watched through its pidfd (release closes it
	// to end this wait); its status is unknown.
	if !c.exitedNow() && c.pidfd != nil {
		waitPidfd(c.pidfd)
	}
	c.markExited()
}

func (c *initChild) markExited() { c.stopOnce.Do(func() { close(c.exit) }) }

func (c *initChild) exitedNow() bool {
	select {
	case <-c.exit:
		return true
	default:
		return false
	}
}

// pidfdExited reports, without waiting, whether the process of the pidfd
// has exited (or the pidfd is unusable).
func pidfdExited(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	exited := true
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		exited = err == nil && n > 0
	})
	return exited
}

// waitPidfd blocks until the process of the pidfd has exited.
// f must be non-blocking (in the poller), or closed to end the wait.
func waitPidfd(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	ready := func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err != nil || n > 0
	}
	if err := rc.Read(ready); err != nil && !errors.Is(err, os.ErrClosed) {
		// Not in the poller after all: wait in a thread, a second at a
		// time, until it is ready or closed.
		for {
			done := true
			if rc.Control(func(fd uintptr) {
				fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				n, err := unix.Poll(fds, 1000)
				done = err != nil && err != unix.EINTR || n > 0
			}) != nil || done {
				return
			}
		}
	}
}

func (c *initChild) handle() Handle {
	return Handle{Pid: c.pid, StartTicks: c.start, Cgroup: c.cgroupPath(), Containment: c.tier, Init: c.init, InitStartTicks: c.initStart}
}

func (c *initChild) cgroupPath() string {
	if c.leaf != nil {
		return c.leaf.Path
	}
	return ""
}

func (c *initChild) note() string            { return c.why }
func (c *initChild) exitFile() *os.File      { return c.pidfd }
func (c *initChild) limitsNote() string      { return c.limits }
func (c *initChild) exited() <-chan struct{} { return c.exit }

func (c *initChild) signalMain(sig syscall.Signal) error { return pidfdSignal(c.pidfd, sig) }

func (c *initChild) signalTree(sig syscall.Signal) []procKey { return signalTree(c.tree, sig) }

func (c *initChild) killTree() []procKey { return c.tree.kill() }

func (c *initChild) stopTree(sig syscall.Signal) (map[procKey]sentProc, []procKey) {
	return stopTree(c.tree, sig)
}

func (c *initChild) signalLate(sig syscall.Signal, sent map[procKey]sentProc) []procKey {
	return signalLate(c.tree, sig, sent)
}

func (c *initChild) alive() int {
	if c.alone.Load() && c.exitedNow() {
		return 0 // the init saw nothing left when the command ended
	}
	n := 0
	for _, m := range c.tree.members() {
		if m.pid != c.pid {
			n++
		}
	}
	if !c.exitedNow() {
		n++
	}
	return n
}

func (c *initChild) dying() (stuck []stuckProc, others int) {
	for _, m := range c.tree.members() {
		dyingState(m.pid, &stuck, &others)
	}
	return stuck, others
}

// sandboxResult returns what held the run, once finish has run.
func (c *initChild) sandboxResult() *corral.SandboxReport { return c.report }

// sandboxReport says what held the run.
func (c *initChild) sandboxReport() *corral.SandboxReport {
	switch {
	case c.encl != nil:
		r := c.encl.Report()
		return &r
	case c.box != nil:
		return c.box.report(c.mechs, c.abi)
	}
	return nil
}

func shimCloseAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
