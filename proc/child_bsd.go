//go:build unix && !linux

package proc

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
)

// bsdChild holds a run in a process group: the portable floor on macOS and
// the BSDs. The main process is reaped by the waiting goroutine as soon as
// it exits; the group it led lives on while any member does, so its id is
// not reused before the group is empty.
type bsdChild struct {
	pid    int
	exit   chan struct{}
	status exitStatus
	why    string
}

func spawn(a *spawnAttr) (child, error) {
	var why string
	switch a.tier {
	case corral.ContainmentAuto:
		why = "cgroup and subreaper tiers need Linux"
	case corral.ContainmentProcessGroup:
	default:
		return nil, fmt.Errorf("%w: %s is not available on this system", ErrTierUnavailable, a.tier)
	}
	if err := a.waitHold(); err != nil {
		return nil, err
	}
	// A shared group is the supervisor's session, in a group of the
	// command's own: the group is the tree.
	sys := &syscall.SysProcAttr{Setsid: !a.shareGroup, Setpgid: a.shareGroup}
	if a.cred != nil {
		sys.Credential = &syscall.Credential{Uid: a.cred.UID, Gid: a.cred.GID, Groups: a.cred.Groups}
		if sys.Credential.Groups == nil {
			sys.Credential.Groups = []uint32{}
		}
	}
	fds := []uintptr{a.files[0].Fd(), a.files[1].Fd(), a.files[2].Fd()}
	pid, _, err := syscall.StartProcess(a.path, a.args, &syscall.ProcAttr{Dir: a.dir, Env: a.env, Files: fds, Sys: sys})
	if err != nil {
		return nil, err
	}
	c := &bsdChild{pid: pid, exit: make(chan struct{}), why: why}
	go c.wait()
	return c, nil
}

func (c *bsdChild) wait() {
	defer close(c.exit)
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(c.pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		break
	}
	c.status.exited = true
	switch {
	case ws.Exited():
		c.status.code = ws.ExitStatus()
	case ws.Signaled():
		c.status.code = -1
		c.status.signal = ws.Signal()
	}
}

func (c *bsdChild) handle() Handle {
	return Handle{Pid: c.pid, Containment: corral.ContainmentProcessGroup}
}

func (c *bsdChild) note() string { return c.why }

func (c *bsdChild) limitsNote() string { return "" }

func (c *bsdChild) exited() <-chan struct{} { return c.exit }

func (c *bsdChild) signalMain(sig syscall.Signal) error {
	select {
	case <-c.exit:
		return os.ErrProcessDone
	default:
	}
	return unix.Kill(c.pid, sig)
}

func (c *bsdChild) signalTree(sig syscall.Signal) []procKey {
	if unix.Kill(-c.pid, sig) != nil {
		return nil
	}
	if followWithCont(sig) {
		unix.Kill(-c.pid, unix.SIGCONT)
	}
	return []procKey{{pid: -c.pid}} // the group; members cannot be counted here
}

// stopTree signals the group; signalLate does nothing: the group signal
// reached every member, and the system cannot list them.
func (c *bsdChild) stopTree(sig syscall.Signal) (map[procKey]sentProc, []procKey) {
	return nil, c.signalTree(sig)
}

func (c *bsdChild) signalLate(syscall.Signal, map[procKey]sentProc) []procKey { return nil }

func (c *bsdChild) killTree() []procKey { return c.signalTree(unix.SIGKILL) }

func (c *bsdChild) alive() int {
	n := 0
	if unix.Kill(-c.pid, 0) == nil {
		n++ // at least one member; the system does not say how many
	}
	return n
}

func (c *bsdChild) finish(bool) (exitStatus, error) {
	<-c.exit
	return c.status, nil
}
