package proc

import (
	"os"
	"runtime"
	"syscall"
)

// SignalTree sends sig to every live process of the run's tree, the main
// process included, and returns how many it reached: background jobs,
// double forks and, in the cgroup and subreaper tiers, setsid escapees and
// daemons too. Unless sig is SIGKILL, SIGCONT or a stop signal (SIGSTOP,
// SIGTSTP, SIGTTIN, SIGTTOU) it is followed by SIGCONT, so that a stopped
// process acts on it. Nothing escalates: the
// run goes on until its processes exit, its timeout expires or Stop is
// called. SIGKILL is sent as KillTree sends it. It is what a supervisor
// forwarding the signals it gets calls; Signal reaches the main process
// alone. On Windows, SIGINT and SIGTERM are sent as CTRL_BREAK_EVENT to
// the command's console group and any other signal but 0 terminates the
// tree, as Spec.StopSignal does.
//
// Once the main process has exited, the run is ending (its leftovers are
// Spec.Leftovers' to handle) and SignalTree returns os.ErrProcessDone.
// It never reaches a process of another run, nor one whose pid was
// recycled.
func (p *Process) SignalTree(sig syscall.Signal) (int, error) {
	if sig == syscall.SIGKILL {
		return p.KillTree()
	}
	if sig == 0 && runtime.GOOS == "windows" {
		return 0, nil // no such check there; any other signal ends the job
	}
	p.tree.Lock()
	defer p.tree.Unlock()
	if p.mainExited() {
		return 0, os.ErrProcessDone
	}
	return len(p.child.signalTree(sig)), nil
}

// KillTree sends SIGKILL to the whole tree at once, in a way that forks
// cannot race where the tier allows (cgroup.kill, or a freeze first), and
// returns how many processes it found. The run then ends as after a
// timeout's SIGKILL: the main process's status is its end by SIGKILL, the
// output is drained, and Result.Killed counts them. Like SignalTree it
// returns os.ErrProcessDone once the main process has exited.
func (p *Process) KillTree() (int, error) {
	p.tree.Lock()
	defer p.tree.Unlock()
	if p.mainExited() {
		return 0, os.ErrProcessDone
	}
	keys := p.child.killTree()
	p.addKilled(keys)
	return len(keys), nil
}

// SignalOutsideGroup sends sig, as SignalTree does, to the processes of
// the tree that are not in process group pgid: those a terminal's signal
// to that group (Ctrl-Z, then fg's SIGCONT) does not reach, such as setsid
// escapees when the run shares the supervisor's group (Spec.ShareGroup).
// Windows has no process groups: it does nothing there.
func (p *Process) SignalOutsideGroup(sig syscall.Signal, pgid int) (int, error) {
	p.tree.Lock()
	defer p.tree.Unlock()
	if p.mainExited() {
		return 0, os.ErrProcessDone
	}
	o, ok := p.child.(outsideSignaller)
	if !ok {
		return 0, nil
	}
	return len(o.signalOutside(sig, pgid)), nil
}

// outsideSignaller is a child that can signal the processes of its tree
// outside a process group.
type outsideSignaller interface {
	signalOutside(sig syscall.Signal, pgid int) []procKey
}
