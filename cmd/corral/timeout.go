//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

func init() {
	register("timeout", "run a command with a time limit, as GNU timeout does, and end its whole tree", timeoutCmd)
}

// timeoutCmd is "corral timeout": its messages are signed "timeout", as
// GNU's are, so that scripts and tests that read them see the same lines.
// "corral help timeout" asks with -h, which GNU's command line refuses:
// alone, it is --help here.
func timeoutCmd(args []string) int {
	if len(args) == 1 && args[0] == "-h" {
		args = []string{"--help"}
	}
	return gnuTimeout("timeout", args)
}

// invokedAsTimeout reports whether this program runs under the name
// timeout (a symlink to corral), which makes it "corral timeout".
func invokedAsTimeout(argv0 string) bool { return filepath.Base(argv0) == "timeout" }

// timeoutRun is one run of corral timeout.
type timeoutRun struct {
	prog        string // the name its messages are signed with
	duration    time.Duration
	killAfter   time.Duration // 0: no SIGKILL
	signal      syscall.Signal
	foreground  bool
	preserve    bool
	verbose     bool
	leftovers   corral.Leftovers
	containment corral.Containment
	command     []string

	p        *proc.Process
	sigs     *timeoutSignals
	timer    *time.Timer
	timedOut bool
}

// gnuTimeout runs GNU timeout's command line and returns its exit status.
func gnuTimeout(prog string, args []string) int {
	t, code, done := parseTimeoutArgs(prog, args, os.Stdout, os.Stderr)
	if done {
		return code
	}
	return t.run()
}

func (t *timeoutRun) run() int {
	if !t.foreground {
		// A group of its own, as GNU's: the command runs in the background
		// unless the shell made this group the terminal's (a prompt does).
		unix.Setpgid(0, 0)
	}
	t.sigs = catchTimeoutSignals(t.signal)
	if code, ok := t.start(); !ok {
		return code
	}
	t.sigs.catchRest()
	t.arm(t.duration)
	t.wait(t.sigs.c)
	return t.status()
}

// start starts the command in corral's containment, with this process's
// own standard input, output and error, in its process group.
func (t *timeoutRun) start() (int, bool) {
	path, err := lookCommand(t.command[0])
	if err == nil {
		t.p, err = proc.Start(context.Background(), t.spec(path, t.command))
		if errors.Is(err, syscall.ENOEXEC) {
			// A script without "#!": run it with the shell, as execvp does.
			t.p, err = proc.Start(context.Background(), t.spec("/bin/sh", append([]string{"sh", path}, t.command[1:]...)))
		}
	}
	if err == nil {
		return 0, true
	}
	code := startFailure(err)
	if code == exitCorralFailed {
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.prog, err)
	} else {
		fmt.Fprintf(os.Stderr, "%s: failed to run command %s: %s\n", t.prog, gnuQuote(t.command[0]), errnoText(err))
	}
	return code, false
}

func (t *timeoutRun) spec(path string, args []string) *proc.Spec {
	stop, grace := t.signal, t.killAfter
	if stop == 0 || stop == syscall.SIGKILL {
		stop = syscall.SIGTERM // for leftovers: the timeout's own signal is sent by t
	}
	if grace == 0 || grace == forever {
		grace = proc.DefaultGrace
	}
	spec := &proc.Spec{
		Path:        path,
		Args:        args,
		Stdio:       timeoutStdio(),
		ShareGroup:  true,
		Leftovers:   t.leftovers,
		Containment: t.containment,
		StopSignal:  stop,
		Grace:       grace,
		Label:       "timeout",
	}
	t.sigs.hold(spec)
	return spec
}

// arm sets the one timer to fire after d; 0 or forever disarms it.
func (t *timeoutRun) arm(d time.Duration) {
	if t.timer != nil {
		t.timer.Stop()
	}
	t.timer = nil
	if d > 0 && d != forever {
		t.timer = time.NewTimer(d)
	}
}

func (t *timeoutRun) timerC() <-chan time.Time {
	if t.timer == nil {
		return nil
	}
	return t.timer.C
}

// wait follows the run until it is over: the timer, and every signal this
// process gets, act on the tree.
func (t *timeoutRun) wait(sigs <-chan os.Signal) {
	for {
		select {
		case <-t.p.Done():
			return
		case <-t.timerC():
			t.timer = nil
			t.expire()
		case s := <-sigs:
			t.onSignal(s.(syscall.Signal))
		}
	}
}

// expire is the timeout (or SIGALRM, as GNU treats it): the tree gets the
// timeout's signal, which is SIGKILL once -k's delay has started.
func (t *timeoutRun) expire() {
	t.timedOut = true
	t.send(t.signal)
}

// send passes sig to the whole tree. The first signal starts -k's delay,
// after which the tree gets SIGKILL.
func (t *timeoutRun) send(sig syscall.Signal) {
	if t.killAfter > 0 {
		t.signal = syscall.SIGKILL
		t.arm(t.killAfter)
		t.killAfter = 0
	}
	if t.verbose {
		fmt.Fprintf(os.Stderr, "%s: sending signal %s to command %s\n", t.prog, gnuSignalName(sig), gnuQuote(t.command[0]))
	}
	if err := t.signalTree(sig); errors.Is(err, os.ErrProcessDone) && t.timedOut {
		// The command is gone and its leftovers are being waited for
		// (--leftovers wait): the timeout ends them.
		t.p.Stop()
	}
}

// status is GNU timeout's exit status for the run.
func (t *timeoutRun) status() int {
	res, err := t.p.Wait()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.prog, err)
	}
	if res.Survivors > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d processes of the tree survived SIGKILL: %s\n", t.prog, res.Survivors, res.SurvivorNote)
	}
	code := res.ExitCode
	switch {
	case res.Signal != 0:
		if !t.timedOut {
			// Die as the command did, so that the caller sees the signal.
			t.sigs.settle()
			dieBySignal(res.Signal)
		}
		if tellsKillFromTimeout(res.Signal) {
			t.preserve = true
		}
		code = 128 + int(res.Signal)
	case code < 0:
		code = exitCorralFailed // the command's end was never seen
	}
	if t.timedOut && !t.preserve {
		return exitTimedOut
	}
	return code
}
