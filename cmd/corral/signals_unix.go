//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// What each subcommand does with the signals it gets (docs/signals.md):
//
//   - SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM never end corral with the Go
//     runtime's stack dump: every subcommand catches them. corral run
//     passes them on to the command's tree; corral timeout passes on
//     every terminating signal (see timeoutsignals.go); the others drop
//     them.
//   - SIGINT, SIGTERM and SIGHUP end a command: clients exit, servers
//     (serve, mcp, shell) shut down as on SIGTERM, run and headless tear
//     their tree down first.
//   - SIGPIPE: a client whose output is a closed pipe ends by it, as a
//     Unix filter does; servers drop it (a write then fails with EPIPE),
//     and run passes it on to the tree, which would have got it writing to
//     that pipe itself.
//   - SIGTSTP (Ctrl-Z) and SIGCONT: run and timeout stop and resume the
//     whole tree with corral; headless drops SIGTSTP (its watchdogs must
//     go on); the rest stop and resume as any program does.
//
// A caught signal is the default again in the commands corral starts; an
// ignored one would stay ignored there, so none is ignored (signal.Ignore)
// on corral's behalf.
//
// corral run catches its signals beside its run's set-up, not before it
// (see watchTreeSignals): until the command starts, one acts as on any
// program that has not yet caught it.

// stopSignals are the signals that end a command.
var stopSignals = cliflag.StopSignals

// treeSignals is what corral run does with the signals it gets while its
// command runs: SIGINT, SIGTERM and SIGHUP stop the run (returned, for the
// exit status); SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGPIPE reach every
// process of the tree as themselves; SIGTSTP stops the tree (SIGSTOP: it
// is in a session of its own, where SIGTSTP would be discarded) and corral,
// and SIGCONT resumes both. The stray signals (cliflag.StraySignals) are
// among them.
type treeSignals struct {
	c     chan os.Signal
	ready chan struct{} // closed once every one is caught
}

// treeSignalList is what corral run catches.
var treeSignalList = append(stopSignals[:len(stopSignals):len(stopSignals)],
	unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM, unix.SIGPIPE, unix.SIGTSTP, unix.SIGCONT)

// notifySignals is signal.Notify; a test holds it back.
var notifySignals = signal.Notify

// watchTreeSignals starts catching treeSignalList in the background and
// returns at once. Each signal caught for the first time is a round trip
// with the Go runtime's signal thread (ten of them, about 0.5 ms of a
// 4 ms run): the run's own set-up (its tier, cgroup leaf and guardian,
// or its init) covers them, and the run's Spec.Hold is ready, so that the
// command starts only once all are caught. They are never let go: the
// process ends with the run, and a signal that comes while it finishes
// is dropped, so that corral's exit status is the run's.
func watchTreeSignals() *treeSignals {
	t := &treeSignals{c: make(chan os.Signal, 8), ready: make(chan struct{})}
	go func() {
		defer close(t.ready)
		notifySignals(t.c, treeSignalList...)
	}()
	return t
}

// hold holds spec's command back until the signals are caught.
func (t *treeSignals) hold(spec *proc.Spec) {
	if !mutant.RunUnheld {
		spec.Hold = t.ready
	}
}

// follow acts on signals until the run is over or a stop signal comes,
// which it returns.
func (t *treeSignals) follow(p *proc.Process) os.Signal {
	for {
		select {
		case <-p.Done():
			return nil
		case s := <-t.c:
			switch s {
			case unix.SIGINT, unix.SIGTERM, unix.SIGHUP:
				return s
			case unix.SIGTSTP:
				p.SignalTree(unix.SIGSTOP)
				unix.Kill(os.Getpid(), unix.SIGSTOP)
			default:
				p.SignalTree(s.(syscall.Signal))
			}
		}
	}
}
