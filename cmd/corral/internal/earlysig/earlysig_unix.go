//go:build unix

package earlysig

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/corralrun/corral/internal/mutant"
)

// RunSignals is what corral run catches: SIGINT, SIGTERM and SIGHUP stop
// the run; SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGPIPE are passed on
// to its tree; SIGTSTP and SIGCONT stop and resume the tree with corral.
var RunSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE,
	syscall.SIGTSTP, syscall.SIGCONT,
}

// Catch is a catching of signals under way: each one caught is sent on C;
// Ready is closed once every one is caught.
type Catch struct {
	C     chan os.Signal
	Ready chan struct{}
}

// Begin starts catching sigs with notify (signal.Notify) in the
// background, and returns at once.
func Begin(notify func(chan<- os.Signal, ...os.Signal), sigs ...os.Signal) *Catch {
	c := &Catch{C: make(chan os.Signal, 8), Ready: make(chan struct{})}
	if mutant.EarlyReadyFirst {
		close(c.Ready)
	}
	go func() {
		if !mutant.EarlyReadyFirst {
			defer close(c.Ready)
		}
		notify(c.C, sigs...)
	}()
	return c
}

// This package imports nothing that is initialized after os/signal (not
// path/filepath, say), so that it is initialized right after it, ahead
// of the rest of corral's packages.

// run is the catching begun for corral run, until it is taken.
var run atomic.Pointer[Catch]

func init() {
	if isRun(os.Args) {
		BeginRun(signal.Notify)
	}
}

// BeginRun begins catching RunSignals with notify, for TakeRun: as
// corral run starts, with signal.Notify.
func BeginRun(notify func(chan<- os.Signal, ...os.Signal)) {
	run.Store(Begin(notify, RunSignals...))
}

// isRun reports whether args are corral run's: corral's first argument
// is the command run, and corral was not invoked as timeout (where that
// would be the name of the command to time).
func isRun(args []string) bool {
	if len(args) < 2 || args[1] != "run" {
		return false
	}
	argv0 := args[0]
	for i := len(argv0) - 1; i >= 0; i-- {
		if argv0[i] == '/' {
			argv0 = argv0[i+1:]
			break
		}
	}
	return argv0 != "timeout"
}

// TakeRun returns the catching of RunSignals begun as this process
// started, because it is corral run, and nil when none was begun or it
// was taken before.
func TakeRun() *Catch { return run.Swap(nil) }
