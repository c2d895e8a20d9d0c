package proc

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/shim"
)

func (c *initChild) finish(detach bool) (exitStatus, error) {
	if !c.exitedNow() {
		// The command survived SIGKILL (stuck in the kernel): the run
		// reports it among its survivors. The init keeps reaping; it
		// exits, and is reaped, once its tree is gone.
		c.report = c.sandboxReport()
		c.release(true)
		return exitStatus{}, nil
	}
	keep := detach && c.alive() > 0
	if keep && c.leaf != nil {
		// Out of this process's cgroup directory, whose processes its
		// guardian kills when it goes.
		if err := moveOut(c.leaf); err != nil {
			c.detachErr = err.Error() + ": they end with this process"
		}
	}
	c.report = c.sandboxReport()
	c.release(keep)
	return c.status, nil
}

// release lets the init go: at once when the tree is gone, or, with keep,
// once what is left of it has gone (a detached tree, survivors).
func (c *initChild) release(keep bool) {
	if keep {
		c.ctl.Send(shim.Msg{Op: shim.OpDetach})
		// The init keeps reaping what was left; when it exits at last, the
		// reaper takes it.
		c.ctl.Close()
		c.closeFDs() // ends the reader's wait on a command that survived
		<-c.reader
		c.releaseBox()
		if c.ownInit {
			c.reapLater()
		}
		return
	}
	if c.poolable && c.reuse() {
		return
	}
	<-c.reader // ended at the command's exit
	if !c.alone.Load() {
		// What the command left below the init (with the process-group
		// tier, what left the group) is killed and counted first; the
		// init's exit would kill it too, but say nothing.
		c.killLeft()
	}
	// The tree is gone. The init exits at once (a one-shot init went by
	// itself already, once its command's end was reported: see
	// shim.Config.OneShot); its exit takes its namespaces down with it (a
	// millisecond or a few), which is waited for, so that nothing of the
	// run outlives it.
	if beforeExitSent != nil {
		beforeExitSent(c)
	}
	c.ctl.Send(shim.Msg{Op: shim.OpExit})
	c.ctl.Close()
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	<-c.reader
	c.waitInit()
	if c.initFD != nil {
		c.initFD.Close()
	}
	if c.leaf != nil {
		c.leaf.Close()
	}
	c.releaseBox()
}

// beforeExitSent, set by a test, is called before release asks an init
// whose tree is gone to exit.
var beforeExitSent func(c *initChild)

// reuse hands the init, whose tree is gone, to the pool of idle ones. It
// reports false, having sent nothing, when the pool is full.
func (c *initChild) reuse() bool {
	pool.mu.Lock()
	full := len(pool.idle[c.poolKey]) >= poolMax
	pool.mu.Unlock()
	if full {
		return false
	}
	<-c.reader // ended at the command's exit
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	// The init answers Idle once it waits for the next run. When the
	// command left nothing, whoever takes the init next skips that answer;
	// otherwise the init kills what is left first, and the answer is
	// waited for: the run is not over while a process of it lives.
	switch {
	case c.alone.Load():
		if c.ctl.Send(shim.Msg{Op: shim.OpIdle}) != nil {
			c.letGo()
			return true
		}
	case !c.killLeft():
		c.letGo()
		return true
	}
	if !c.putIdle() {
		c.letGo()
	}
	return true
}

// dropInitFD closes the init's pidfd once its command has started, when
// the init is this process's child: its pid cannot name another process
// while this process has not reaped it. Idle in the pool, the init is
// watched through its socket (idleInit.exited); reopenInitFD opens the
// pidfd again only to wait for the init's exit. A run holds four
// descriptors, not five (10,000 fewer at 10,000 runs). An enclosure's
// init, its holder's child, keeps its pidfd.
func (c *initChild) dropInitFD() {
	if !c.ownInit || c.initFD == nil || c.init <= 0 || mutant.InitFDKept {
		return
	}
	c.initFD.Close()
	c.initFD = nil
}

// reopenInitFD opens the init's pidfd again if dropInitFD closed it, and
// reports whether c holds one: false when the init is not there any more
// (or its pid names a process that is not this process's child: it was
// reaped by another waiter).
func (c *initChild) reopenInitFD() bool {
	if c.initFD != nil {
		return true
	}
	if c.init <= 0 {
		return false
	}
	// Non-blocking, so that the File lives in the poller (see forkInit).
	fd, err := unix.PidfdOpen(c.init, unix.PIDFD_NONBLOCK)
	if err == unix.EINVAL { // before Linux 5.10
		if fd, err = unix.PidfdOpen(c.init, 0); err == nil {
			unix.SetNonblock(fd, true)
		}
	}
	if err != nil {
		return false
	}
	// The pidfd pins the process it was opened for: if that one is still
	// a child of this process (alive or not yet reaped), it is the init,
	// whose pid no other process can take before this process reaps it.
	// (One system call; reading its start time took three and the
	// kernel's formatting of its stat, 10 µs here. Linux 5.3 cannot ask a
	// pidfd: EINVAL, and the pid is trusted as it was before.)
	var info siginfo
	if waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT) == unix.ECHILD {
		unix.Close(fd)
		return false
	}
	c.initFD = os.NewFile(uintptr(fd), "pidfd")
	return true
}

// othersWait is the time finish spent waiting for the init to kill what
// the command left: the init's work, on a machine that may keep it from a
// CPU.
func (c *initChild) othersWait() time.Duration { return c.settled }

// killedLeft is the number of processes the init killed because the
// command left them: Result.Killed counts them with those corral killed.
func (c *initChild) killedLeft() int { return c.left }

// killLeft asks the init to kill what the command left below it and waits,
// up to killWait, for its Idle answer, sent once it has killed and reaped
// them, with their number. It reports false when the init could not be
// asked, said something else, or nothing in time (it is then let go, and
// its exit takes what is left).
func (c *initChild) killLeft() bool {
	if c.ctl.Send(shim.Msg{Op: shim.OpIdle}) != nil {
		return false
	}
	if mutant.IdleUnawaited {
		return true
	}
	start := time.Now()
	defer func() { c.settled += time.Since(start) }()
	// The wait is bounded by the socket's deadline, as for the init's
	// first word.
	if c.ctl.SetReadDeadline(start.Add(killWait)) != nil {
		return false
	}
	defer c.ctl.SetReadDeadline(time.Time{})
	m, files, err := c.ctl.Recv()
	shimCloseAll(files)
	if err != nil || m.Op != shim.OpIdle {
		return false
	}
	c.left = m.Killed
	return true
}

// waitInit waits for the init to exit after Exit (it kills anything left
// first), SIGKILLs it if it does not within a bound, and reaps it.
func (c *initChild) waitInit() {
	if !c.reopenInitFD() {
		// Gone, and reaped by another waiter of this process: nothing to
		// wait for or reap.
		if c.ownInit && c.init > 0 {
			reaper.Disown(c.init)
		}
		c.unbound()
		return
	}
	done := make(chan struct{})
	go func() { waitPidfd(c.initFD); close(done) }()
	t := time.NewTimer(killWait)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		unix.PidfdSendSignal(int(c.initFD.Fd()), unix.SIGKILL, nil, 0)
		<-done
	}
	if c.ownInit {
		reapOwned(c.init)
	}
	c.unbound()
}

// reapLater hands the init, still holding part of its tree, to the reaper.
func (c *initChild) reapLater() {
	pid, start, unbound := c.init, c.initStart, c.unbound
	// Claimed before it is disowned, so that no pass can see it unowned
	// and unclaimed.
	reaper.RegisterUntil(func(z *reaper.Zombie) bool { return z.Pid == pid && z.Start == start }, func() bool {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.Start != start {
			unbound()
			return true
		}
		return false
	})
	reaper.Disown(pid)
}

// unbound lets the spawner's thread go once no init it forked lives.
func (c *initChild) unbound() {
	if c.unbind != nil {
		c.unbind()
	}
}

func (c *initChild) closeFDs() {
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	if c.initFD != nil {
		c.initFD.Close()
	}
}

// releaseBox waits for the run's chores (sweeps started beside its
// command), and closes the run's one-shot sandbox: its relays, and its
// private /tmp, whose removal the kernel may hold while it takes the
// sandbox's mounts down (as nobody on a machine busy with other
// namespaces: up to 440 ms measured), which is the machine's time.
func (c *initChild) releaseBox() {
	if c.chores != nil && !mutant.ChoresUnjoined {
		<-c.chores
	}
	switch {
	case c.box == nil:
	case c.kernel != nil:
		c.kernel(c.box.close)
	default:
		c.box.close()
	}
}

func (c *initChild) timeKernelBy(kernel func(func())) { c.kernel = kernel }

// abandonInit undoes a start that failed: the init is killed and reaped.
func (c *initChild) abandonInit() {
	if c.ctl != nil {
		c.ctl.Close()
	}
	if c.ownInit && c.init > 0 {
		if c.initFD != nil {
			unix.PidfdSendSignal(int(c.initFD.Fd()), unix.SIGKILL, nil, 0)
		} else {
			unix.Kill(c.init, unix.SIGKILL)
		}
		reapOwned(c.init)
	}
	c.unbound()
	c.closeFDs()
	if c.leaf != nil {
		c.leaf.Close()
	}
	c.releaseBox()
}
