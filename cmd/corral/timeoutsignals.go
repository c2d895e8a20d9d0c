//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// The signals corral timeout passes on to the tree, as GNU timeout does:
// every signal whose default action ends a process, the real-time ones
// included, and ALRM, which is the timeout itself. commonForwarded are
// caught before the command starts; rareForwarded just after it (catching
// a signal costs a round trip to the runtime's signal thread, and these
// are some forty), so one of them sent in the first moment of the run is
// dropped rather than passed on. SIGPROF is the Go runtime's and is left
// out.
var (
	commonForwarded = []string{"ALRM", "INT", "QUIT", "HUP", "TERM", "PIPE", "USR1", "USR2"}
	rareForwarded   = []string{"ILL", "TRAP", "ABRT", "BUS", "FPE", "SEGV", "XCPU", "XFSZ", "SYS",
		"VTALRM", "POLL", "PWR", "STKFLT", "EMT"}
)

func signalsNamed(names []string) []syscall.Signal {
	var out []syscall.Signal
	for _, n := range names {
		if s, ok := signalNamed(n); ok {
			out = append(out, s)
		}
	}
	return out
}

// realTimeSignals are the real-time signals as glibc numbers them (see
// proc.ParseSignal); none on other systems.
func realTimeSignals() []syscall.Signal {
	var out []syscall.Signal
	for s := syscall.Signal(34); isLinux && s <= 64; s++ {
		out = append(out, s)
	}
	return out
}

// timeoutSignals is what corral timeout catches.
type timeoutSignals struct {
	c              chan os.Signal
	term           syscall.Signal
	ignoredAtStart func(syscall.Signal) bool
	ready          chan struct{} // closed once catchTimeoutSignals' work is done
	rest           chan struct{} // closed once catchRest's work is done
}

// catchTimeoutSignals catches, before the command starts, the signals
// corral timeout acts on: the common ones it forwards, the job-control ones
// (TSTP, CONT, TTIN, TTOU), and term, the timeout's own signal; catchRest
// adds the rare ones. A signal caught here is the default again in the
// command. One this process was started with ignored (a shell's background
// job ignores INT and QUIT; "trap ” PIPE") is neither caught nor
// forwarded, and stays ignored for the command, as under GNU timeout; ALRM
// and term are caught whatever.
//
// It does that in the background and returns at once: the command's
// Spec.Hold is ready, closed once it is done (see watchTreeSignals).
func catchTimeoutSignals(term syscall.Signal) *timeoutSignals {
	ts := &timeoutSignals{c: make(chan os.Signal, 32), term: term, ready: make(chan struct{})}
	go func() {
		defer close(ts.ready)
		ts.ignoredAtStart = startIgnoredFunc()
		ts.catchCommon()
	}()
	return ts
}

// catchCommon is catchTimeoutSignals' work.
func (ts *timeoutSignals) catchCommon() {
	term := ts.term
	rare := append(signalsNamed(rareForwarded), realTimeSignals()...)
	ts.keepIgnored(rare) // before the start, so that the command inherits them
	list := ts.keepIgnored(signalsNamed(commonForwarded))
	if term != 0 && term != syscall.SIGKILL && term != syscall.SIGSTOP {
		list = append(list, term)
	}
	list = append(list, unix.SIGCONT, unix.SIGTTIN, unix.SIGTTOU)
	if ts.ignoredAtStart(unix.SIGTSTP) {
		signal.Ignore(unix.SIGTSTP)
	} else {
		list = append(list, unix.SIGTSTP)
	}
	if ts.ignoredAtStart(unix.SIGWINCH) {
		signal.Ignore(unix.SIGWINCH)
	}
	notifySignals(ts.c, list...)
}

// hold holds spec's command back until catchTimeoutSignals' work is done.
func (ts *timeoutSignals) hold(spec *proc.Spec) {
	if !mutant.RunUnheld {
		spec.Hold = ts.ready
	}
}

// keepIgnored ignores again, so that the command inherits them, the
// signals of sigs this process was started with ignored, and returns the
// others, to catch.
func (ts *timeoutSignals) keepIgnored(sigs []syscall.Signal) []os.Signal {
	var out []os.Signal
	for _, s := range sigs {
		if s != unix.SIGALRM && s != ts.term && ts.ignoredAtStart(s) {
			signal.Ignore(s) // the runtime's handler replaced it
			continue
		}
		out = append(out, s)
	}
	return out
}

// catchRest catches the rare forwarded signals, in the background.
func (ts *timeoutSignals) catchRest() {
	rare := append(signalsNamed(rareForwarded), realTimeSignals()...)
	var list []os.Signal
	for _, s := range rare {
		if s == ts.term || !signal.Ignored(s) {
			list = append(list, s)
		}
	}
	ts.rest = make(chan struct{})
	go func() {
		defer close(ts.rest)
		signal.Notify(ts.c, list...)
	}()
}

// settle waits for catchRest's work, which must not race a change of a
// signal's action (dieBySignal). The ordinary end does not wait for it:
// the process exits.
func (ts *timeoutSignals) settle() {
	if ts.rest != nil {
		<-ts.rest
	}
}

// startIgnoredFunc reports the signals this process was started with
// ignored: SIGHUP and SIGINT as the runtime kept them, the others as
// startIgnored reads them (none, where it cannot).
func startIgnoredFunc() func(syscall.Signal) bool {
	ign, _ := startIgnored()
	return func(s syscall.Signal) bool {
		if s == syscall.SIGINT || s == syscall.SIGHUP {
			return signal.Ignored(s)
		}
		return int(s) < len(ign) && ign[s]
	}
}

// onSignal acts on a signal this process got. TTIN and TTOU, which the
// terminal sends the group when the command uses it from the background,
// do not stop this process (GNU ignores them too), so that the timeout
// still comes. TSTP (Ctrl-Z) stops the whole tree and this process, CONT
// (fg, bg) resumes them. ALRM is the timeout, as GNU treats it. Any other
// reaches the whole tree as itself.
func (t *timeoutRun) onSignal(s syscall.Signal) {
	switch s {
	case unix.SIGTTIN, unix.SIGTTOU:
	case unix.SIGTSTP:
		t.suspend()
	case unix.SIGCONT:
		t.p.SignalOutsideGroup(unix.SIGCONT, unix.Getpgrp())
	case unix.SIGALRM:
		t.expire()
	default:
		t.forward(s)
	}
}

// suspend stops the tree and this process. The terminal's SIGTSTP went to
// the whole process group, so the processes of the tree still in it have
// it already (each acts on it as it chooses, as under a shell); those
// that left the group get SIGSTOP. This process then stops, so that the
// shell sees the job stopped; the shell's SIGCONT resumes the group and
// onSignal the rest.
func (t *timeoutRun) suspend() {
	t.p.SignalOutsideGroup(unix.SIGSTOP, unix.Getpgrp())
	unix.Kill(os.Getpid(), unix.SIGSTOP)
}
