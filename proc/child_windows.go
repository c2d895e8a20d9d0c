package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/winjob"
)

// windowsChild holds a run in a Job Object of its own: the Windows tier,
// corral.ContainmentJobObject, and the only one there.
//
// What is guaranteed on Windows:
//
//   - The main process is assigned to the job while suspended, before its
//     first instruction; every process it or its descendants create is a
//     member too. The job allows no breakaway: creating a process with
//     CREATE_BREAKAWAY_FROM_JOB fails in the member that asks.
//   - Killing the tree (timeout, cancellation, Stop, leftovers) terminates
//     every member with TerminateJobObject; a member created meanwhile is
//     terminated too, so forks cannot race it.
//   - The job has kill-on-close and its handle is the supervisor's alone:
//     if the supervisor dies, the system closes the handle and terminates
//     the tree. Only LeftoversDetach clears kill-on-close, at the end of the
//     run, for the processes it detaches.
//   - The command inherits its three standard handles and no other handle
//     of the supervisor.
//   - A member that crashes exits at once with its exception code instead
//     of waiting on an error-reporting dialog.
//   - Spec.Limits: Pids caps live processes (not threads), Memory caps the
//     committed memory of the whole tree; a commit beyond it fails, nothing
//     is killed. Result.LimitsNote says what was set.
//   - When the supervisor has no console (a service), the command gets a
//     hidden console of its own (CREATE_NO_WINDOW), never a window. Its
//     host, conhost.exe, runs inside the job: it is not counted as a
//     leftover or as killed, but it does count against Limits.Pids.
//
// What is not:
//
//   - Windows has no signals. SIGINT and SIGTERM become CTRL_BREAK_EVENT,
//     sent to the console process group the main process leads; only
//     members attached to the supervisor's console get it (not GUI
//     programs, not processes that made a console or group of their own),
//     and a command may handle it and go on. When it cannot be sent (the
//     supervisor has no console) the tree is terminated at once instead of
//     after the grace period. Every other signal terminates.
//   - There is no stopping and continuing (SIGSTOP, SIGCONT): a suspended
//     member is terminated like any other.
//   - A process that a service, the task scheduler, WMI or a COM server
//     starts at a member's request is not a member.
//   - A member stuck in a driver may outlive TerminateJobObject for a while;
//     it is then reported in Result.Survivors.
//   - The bounded drain needs output pipes whose reads honour deadlines,
//     which the ends of os.Pipe do not on Windows; outputPipe makes such
//     pipes. Until newStream uses it, a leftover that holds stdout or
//     stderr (a console host can, too) keeps the drain, and the run,
//     waiting until it exits.
//
// Exit status: the main process's exit code as GetExitCodeProcess reports
// it. When corral terminated the main process for signal sig, the code is
// 128+sig and the result reports ExitCode -1 and Signal sig, as on Unix;
// when a CTRL_BREAK_EVENT that corral sent ended it (STATUS_CONTROL_C_EXIT),
// likewise with the signal that was asked for.
//
// The main process is watched by a goroutine blocked in
// WaitForMultipleObjects on its handle; the goroutine ends when the process
// exits or when finish stops it. The handle stays open until finish, so the
// pid, which is also the process group id, is not reused during the run.
type windowsChild struct {
	pid    int
	proc   windows.Handle // the main process
	job    *winjob.Job
	cancel windows.Handle // manual-reset event: stop watching
	limits string

	exit     chan struct{} // closed when the main process has exited
	watched  chan struct{} // closed when the watcher has returned
	watchErr error         // set by the watcher before watched is closed

	mu     sync.Mutex
	closed bool            // finish has released the handles
	ended  syscall.Signal  // first signal for which corral terminated the live main
	broke  syscall.Signal  // first signal sent as CTRL_BREAK while the main lived
	hosts  map[uint32]bool // member pid: is it a console host (see members)
}

const (
	// stillActive is what GetExitCodeProcess reports for a live process.
	stillActive = 259
	// ctrlCExit is the exit code of a process that a console control event
	// ended through the default handler.
	ctrlCExit = uint32(windows.STATUS_CONTROL_C_EXIT)
)

// exitCodeFor is the exit code corral gives a process it terminates for sig.
func exitCodeFor(sig syscall.Signal) uint32 { return 128 + uint32(sig) }

func (c *windowsChild) watch() {
	defer close(c.watched)
	ev, err := windows.WaitForMultipleObjects([]windows.Handle{c.proc, c.cancel}, false, windows.INFINITE)
	switch {
	case err == nil && ev == windows.WAIT_OBJECT_0:
		close(c.exit)
	case err == nil && ev == windows.WAIT_OBJECT_0+1:
		// finish stopped us: the main process outlived the kill.
	default:
		// Cannot happen with valid handles. Report it, and let the run end
		// rather than hang: finish reads the real status.
		c.watchErr = fmt.Errorf("waiting for the main process: event %#x: %w", ev, err)
		close(c.exit)
	}
}

func (c *windowsChild) handle() Handle {
	return Handle{Pid: c.pid, Containment: corral.ContainmentJobObject}
}

func (c *windowsChild) note() string            { return "" }
func (c *windowsChild) limitsNote() string      { return c.limits }
func (c *windowsChild) exited() <-chan struct{} { return c.exit }

func (c *windowsChild) mainExited() bool {
	select {
	case <-c.exit:
		return true
	default:
		return false
	}
}

// signalMain delivers SIGINT as CTRL_BREAK_EVENT to the main process's
// console group (the main and those of its descendants that share its
// group and the supervisor's console: Windows cannot address one process),
// and terminates the main process alone for any other signal. Signal 0
// only checks that it is alive.
func (c *windowsChild) signalMain(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.mainExited() {
		return os.ErrProcessDone
	}
	switch sig {
	case 0:
		return nil
	case syscall.SIGINT:
		if err := c.ctrlBreak(); err != nil {
			return fmt.Errorf("proc: sending SIGINT as CTRL_BREAK_EVENT to process group %d: %w (the command must share the supervisor's console; SIGKILL terminates it instead)", c.pid, err)
		}
		c.noteBreak(sig)
		return nil
	}
	if err := windows.TerminateProcess(c.proc, exitCodeFor(sig)); err != nil {
		if c.mainExited() {
			return os.ErrProcessDone // it exited first: access is denied then
		}
		return fmt.Errorf("proc: terminating pid %d: %w", c.pid, err)
	}
	if c.ended == 0 {
		c.ended = sig
	}
	return nil
}

// signalTree sends CTRL_BREAK_EVENT to the main process's console group for
// SIGINT and SIGTERM, and terminates the job for any other signal, or when
// the event cannot be sent. It returns the members found before.
func (c *windowsChild) signalTree(sig syscall.Signal) []procKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	keys := c.members()
	if sig == syscall.SIGINT || sig == syscall.SIGTERM {
		if c.ctrlBreak() == nil {
			c.noteBreak(sig)
			return keys
		}
		// No console to carry the event: waiting out the grace period
		// would only delay the same end.
	}
	c.terminate(sig)
	return keys
}

// stopTree sends the event (see signalTree); signalLate does nothing: the
// console event reaches the whole group, and a job that could not get it
// was terminated.
func (c *windowsChild) stopTree(sig syscall.Signal) (map[procKey]sentProc, []procKey) {
	return nil, c.signalTree(sig)
}

func (c *windowsChild) signalLate(syscall.Signal, map[procKey]sentProc) []procKey { return nil }

// killTree terminates every member of the job and returns those it found.
func (c *windowsChild) killTree() []procKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	keys := c.members()
	c.terminate(syscall.SIGKILL)
	return keys
}

// alive counts the live members other than the main process, plus the main
// process until it has exited. Job membership, not the system's process
// list, decides, so an unrelated process is never counted. When the job
// cannot be queried it reports none, and the run's end closes the job,
// which kills whatever is left.
func (c *windowsChild) alive() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0
	}
	n := 0
	for _, k := range c.members() {
		if k.pid != c.pid {
			n++
		}
	}
	if !c.mainExited() {
		n++
	}
	return n
}

// finish collects the main process's exit status and releases the job.
// It never blocks on a process: if the main process has not exited (a
// survivor of the kill), the watcher is stopped and the status is left
// uncollected. With detach, kill-on-close is cleared first, so the members
// outlive the job handle; otherwise closing it terminates any left.
func (c *windowsChild) finish(detach bool) (exitStatus, error) {
	if !c.mainExited() {
		windows.SetEvent(c.cancel)
	}
	<-c.watched
	c.mu.Lock()
	defer c.mu.Unlock()
	var st exitStatus
	var errs []error
	if c.watchErr != nil {
		errs = append(errs, c.watchErr)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(c.proc, &code); err != nil {
		errs = append(errs, fmt.Errorf("reading the exit code: %w", err))
	} else if code != stillActive || (c.mainExited() && c.watchErr == nil) {
		st = c.status(code)
	}
	if detach {
		if err := c.job.Detach(); err != nil {
			errs = append(errs, fmt.Errorf("detaching leftovers failed, so closing the job killed them: %w", err))
		}
	}
	if err := c.job.Close(); err != nil {
		errs = append(errs, err)
	}
	windows.CloseHandle(c.proc)
	windows.CloseHandle(c.cancel)
	c.closed = true
	return st, errors.Join(errs...)
}

// status reads code, reporting the signal corral ended the main process for.
func (c *windowsChild) status(code uint32) exitStatus {
	st := exitStatus{exited: true, code: int(code)}
	switch {
	case c.ended != 0 && code == exitCodeFor(c.ended):
		st.code, st.signal = -1, c.ended
	case c.broke != 0 && code == ctrlCExit:
		st.code, st.signal = -1, c.broke
	}
	return st
}

// members lists the job's live processes other than console hosts; c.mu
// is held. When the supervisor has no console, the command gets a hidden
// one, and Windows starts its host, conhost.exe, inside the job; it is not
// the command's, exits with the last process attached to that console, and
// is neither a leftover nor counted as killed (closing the job ends it if
// need be). Whether a pid is a host is asked once per member.
func (c *windowsChild) members() []procKey {
	pids, err := c.job.Pids()
	if err != nil {
		return nil
	}
	if c.hosts == nil {
		c.hosts = map[uint32]bool{}
	}
	keys := make([]procKey, 0, len(pids))
	seen := make(map[uint32]bool, len(pids))
	for _, pid := range pids {
		seen[pid] = true
		host, known := c.hosts[pid]
		if !known {
			host = int(pid) != c.pid && c.job.ConsoleHost(pid)
			c.hosts[pid] = host
		}
		if !host {
			keys = append(keys, procKey{pid: int(pid)})
		}
	}
	for pid := range c.hosts {
		if !seen[pid] {
			delete(c.hosts, pid) // gone: the pid may come back as another member
		}
	}
	return keys
}

// terminate ends every member with the exit code for sig; c.mu is held.
func (c *windowsChild) terminate(sig syscall.Signal) {
	alive := !c.mainExited()
	if err := c.job.Terminate(exitCodeFor(sig)); err != nil {
		// Cannot fail on a job handle we hold; end the main process at
		// least, and let closing the job take the rest.
		if windows.TerminateProcess(c.proc, exitCodeFor(sig)) != nil {
			return
		}
	}
	if alive && c.ended == 0 {
		c.ended = sig
	}
}

// ctrlBreak sends CTRL_BREAK_EVENT to the console process group that the
// main process leads (CTRL_C_EVENT cannot be aimed at a group). It refuses
// when that group id is the supervisor's own group, which can only happen
// if the supervisor's group leader is long gone and its pid was reused for
// the main process: the event would reach the supervisor too. c.mu is
// held.
func (c *windowsChild) ctrlBreak() error {
	if p := windows.RtlGetCurrentPeb().ProcessParameters; p != nil && p.ProcessGroupId == uint32(c.pid) {
		return errors.New("the command's process group id is also the supervisor's")
	}
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(c.pid))
}

// noteBreak remembers that a CTRL_BREAK_EVENT for sig reached a live main
// process; c.mu is held.
func (c *windowsChild) noteBreak(sig syscall.Signal) {
	if c.broke == 0 && !c.mainExited() {
		c.broke = sig
	}
}
