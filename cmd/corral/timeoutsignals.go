//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// timeoutForwarded are the signals corral timeout passes on to the tree,
// as GNU timeout does: every signal whose default action ends a process,
// the real-time ones included, and ALRM, which is the timeout itself.
// SIGPROF is the Go runtime's and is left out.
func timeoutForwarded() []os.Signal {
	names := []string{"ALRM", "INT", "QUIT", "HUP", "TERM", "PIPE", "USR1", "USR2",
		"ILL", "TRAP", "ABRT", "BUS", "FPE", "SEGV", "XCPU", "XFSZ", "SYS",
		"VTALRM", "POLL", "PWR", "STKFLT", "EMT"}
	var out []os.Signal
	for _, n := range names {
		if s, ok := signalNamed(n); ok {
			out = append(out, s)
		}
	}
	if isLinux {
		for s := syscall.Signal(sigRTMinC); s <= sigRTMaxC; s++ {
			out = append(out, s)
		}
	}
	return out
}

// The real-time signals, as glibc numbers them (see proc.ParseSignal).
const (
	sigRTMinC = 34
	sigRTMaxC = 64
)

// catchTimeoutSignals catches, before the command starts, the signals
// corral timeout acts on: those it forwards (see timeoutForwarded), the
// job-control ones (TSTP, CONT, TTIN, TTOU), and term, the timeout's own
// signal. A signal caught here is the default again in the command. One
// this process was started with ignored (a shell's background job ignores
// INT and QUIT; "trap ” PIPE") is neither caught nor forwarded, and stays
// ignored for the command, as under GNU timeout; ALRM and term are caught
// whatever.
func catchTimeoutSignals(term syscall.Signal) chan os.Signal {
	ignoredAtStart := startIgnoredFunc()
	c := make(chan os.Signal, 32)
	var list []os.Signal
	for _, s := range timeoutForwarded() {
		if s != unix.SIGALRM && s != term && ignoredAtStart(s.(syscall.Signal)) {
			signal.Ignore(s) // the runtime's handler replaced it: ignored again, so the command inherits it
			continue
		}
		list = append(list, s)
	}
	if term != 0 && term != syscall.SIGKILL && term != syscall.SIGSTOP {
		list = append(list, term)
	}
	list = append(list, unix.SIGCONT, unix.SIGTTIN, unix.SIGTTOU)
	if ignoredAtStart(unix.SIGTSTP) {
		signal.Ignore(unix.SIGTSTP)
	} else {
		list = append(list, unix.SIGTSTP)
	}
	if ignoredAtStart(unix.SIGWINCH) {
		signal.Ignore(unix.SIGWINCH)
	}
	signal.Notify(c, list...)
	return c
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
