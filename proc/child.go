package proc

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
)

// child is a started main process and the containment around its tree, as
// each platform provides it.
type child interface {
	handle() Handle
	// note says why a stronger tier was not used; limitsNote what became
	// of Spec.Limits.
	note() string
	limitsNote() string
	// exited is closed when the main process has exited. The process is not
	// reaped before finish, so its pid (and the group and session it leads)
	// cannot be recycled while the run lasts.
	exited() <-chan struct{}
	// signalMain signals the main process alone.
	signalMain(sig syscall.Signal) error
	// signalTree sends sig to every live process of the tree, followed by
	// SIGCONT unless sig is SIGKILL, SIGCONT or a stop signal, and returns
	// them (SignalTree).
	signalTree(sig syscall.Signal) []procKey
	// stopTree sends sig to every live process of the tree, followed by
	// SIGCONT so that stopped processes act on it, and returns them, and
	// what each ran when it was signalled, for signalLate (nil where the
	// tier cannot list them).
	stopTree(sig syscall.Signal) (sent map[procKey]sentProc, signalled []procKey)
	// signalLate sends sig (followed by SIGCONT) to the live processes of
	// the tree that are not in sent, and to those that run another program
	// than the one sent records if they executed it within execWindow of
	// their signal, not counting the time the machine kept them from a
	// CPU; it records them and returns them.
	signalLate(sig syscall.Signal, sent map[procKey]sentProc) []procKey
	// killTree sends SIGKILL to the whole tree, in a way that forks cannot
	// race where the tier allows, and returns the processes it found.
	killTree() []procKey
	// alive counts the live processes of the tree other than the main
	// process once it has exited. Zombies do not count.
	alive() int
	// finish reaps the main process and the tree's zombies and releases
	// the containment. With detach, a tree that still has live processes
	// keeps its containment, released when the last of them is gone.
	finish(detach bool) (exitStatus, error)
}

// spawnAttr is what a platform needs to start a child.
type spawnAttr struct {
	path  string
	args  []string
	env   []string
	dir   string
	files [3]*os.File
	cred  *Credential
	tier  corral.Containment
	label string
	limit Limits

	sandbox   corral.Sandbox
	enclosure *Enclosure
	guard     *Guard

	shareGroup bool // Spec.ShareGroup

	hold    <-chan struct{} // Spec.Hold
	holdCtx context.Context // the Start's: ends a hold
}

// waitHold is called once the run is ready, just before its command
// starts: it waits for Spec.Hold, or fails when the Start's context ends.
func (a *spawnAttr) waitHold() error {
	if a.hold == nil || mutant.HoldIgnored {
		return nil
	}
	select {
	case <-a.hold:
		return nil
	case <-a.holdCtx.Done():
		return fmt.Errorf("proc: not started: held until the context ended: %w", a.holdCtx.Err())
	}
}

// bindingReporter is a child that knows what ends its tree if the
// supervisor is killed.
type bindingReporter interface {
	binding() (binding, note string)
}

// sandboxReporter is a child that ran sandboxed; its report is complete
// once finish has run.
type sandboxReporter interface {
	sandboxResult() *corral.SandboxReport
}
