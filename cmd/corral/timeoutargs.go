//go:build unix

package main

import (
	"fmt"
	"io"
	"syscall"

	"github.com/corralrun/corral"
)

// timeoutOptions are GNU timeout's options, and corral's --leftovers.
var timeoutOptions = []gnuOption{
	{'f', "foreground", false},
	{'k', "kill-after", true},
	{'p', "preserve-status", false},
	{'s', "signal", true},
	{'v', "verbose", false},
	{0, "leftovers", true},
	{0, "containment", true},
	{0, "help", false},
	{0, "version", false},
}

// parseTimeoutArgs reads GNU timeout's command line: options, DURATION,
// COMMAND and its arguments. When done is true nothing is to run and code
// is the exit status: 0 after --help or --version, 125 after an error,
// said on stderr with GNU's words and its "Try ... --help" line.
func parseTimeoutArgs(prog string, args []string, stdout, stderr io.Writer) (t *timeoutRun, code int, done bool) {
	t = &timeoutRun{prog: prog, signal: syscall.SIGTERM}
	fail := func(err error) (*timeoutRun, int, bool) {
		if err != nil {
			fmt.Fprintln(stderr, err)
		}
		fmt.Fprintf(stderr, "Try '%s --help' for more information.\n", prog)
		return nil, exitCorralFailed, true
	}
	g := &gnuArgs{prog: prog, opts: timeoutOptions, args: args}
	for {
		o, arg, ok, err := g.next()
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		switch o.long {
		case "help":
			fmt.Fprintf(stdout, timeoutHelp, prog, prog)
			return nil, 0, true
		case "version":
			fmt.Fprintf(stdout, "timeout (corral) %s\n", version())
			return nil, 0, true
		}
		if err := t.set(o, arg); err != nil {
			return fail(err)
		}
	}
	if len(args)-g.i < 2 {
		return fail(nil)
	}
	d, err := parseGNUDuration(args[g.i])
	if err != nil {
		return fail(fmt.Errorf("%s: invalid time interval %s", prog, gnuQuote(args[g.i])))
	}
	t.duration, t.command = d, args[g.i+1:]
	return t, 0, false
}

// set applies one option.
func (t *timeoutRun) set(o *gnuOption, arg string) error {
	switch o.long {
	case "foreground":
		t.foreground = true
	case "preserve-status":
		t.preserve = true
	case "verbose":
		t.verbose = true
	case "kill-after":
		d, err := parseGNUDuration(arg)
		if err != nil {
			return fmt.Errorf("%s: invalid time interval %s", t.prog, gnuQuote(arg))
		}
		t.killAfter = d
	case "signal":
		sig, ok := gnuOperandSignal(arg)
		if !ok {
			return fmt.Errorf("%s: %s: invalid signal", t.prog, gnuQuote(arg))
		}
		t.signal = sig
	case "containment":
		c, err := corral.ParseContainment(arg)
		if err != nil {
			return fmt.Errorf("%s: --containment: %v", t.prog, err)
		}
		t.containment = c
	case "leftovers":
		l, err := corral.ParseLeftovers(arg)
		if err != nil {
			return fmt.Errorf("%s: --leftovers: %v", t.prog, err)
		}
		t.leftovers = l
	}
	return nil
}

const timeoutHelp = `Usage: %s [OPTION] DURATION COMMAND [ARG]...
  or:  %[1]s [OPTION]
Start COMMAND, and kill it if still running after DURATION.

Mandatory arguments to long options are mandatory for short options too.
  -f, --foreground
         run COMMAND in this process's own process group, so that it may
         read the terminal and get its signals (Ctrl-C, Ctrl-Z) when
         timeout is not run from a shell prompt
  -k, --kill-after=DURATION
         also send a KILL signal to the whole tree if COMMAND is still
         running this long after the initial signal was sent
  -p, --preserve-status
         exit with the same status as COMMAND, even when the command
         times out
  -s, --signal=SIGNAL
         specify the signal to be sent on timeout; SIGNAL may be a name
         like 'HUP' or a number; see 'kill -l' for a list of signals
  -v, --verbose
         diagnose to standard error any signal sent upon timeout
      --leftovers=WHAT
         what becomes of processes COMMAND leaves running when it exits:
         kill (the default: they are signalled, then killed after the
         -k delay or 2 s), wait (for them, within DURATION), or detach
         (leave them running, as GNU timeout does)
      --containment=TIER
         what holds the tree: auto (the default: a cgroup where corral may
         make one, an init process otherwise), cgroup or subreaper
      --help        display this help and exit
      --version     output version information and exit

DURATION is a floating point number with an optional suffix:
's' for seconds (the default), 'm' for minutes, 'h' for hours or 'd' for days.
A duration of 0 disables the associated timeout.

Upon timeout, send the TERM signal to COMMAND, if no other SIGNAL specified.
The TERM signal kills any process that does not block or catch that signal.
It may be necessary to use the KILL signal, since this signal can't be caught.

Unlike GNU timeout, corral holds COMMAND's whole process tree (a cgroup, or
an init process): the signals reach every process of it, those that left
its process group or session included, and none of it outlives timeout,
even when timeout itself is killed. Signals timeout gets (TERM, INT, HUP,
QUIT, USR1, USR2, ...) are passed on to the tree; ALRM is the timeout.

Exit status:
  124  if COMMAND times out, and --preserve-status is not specified
  125  if the timeout command itself fails
  126  if COMMAND is found but cannot be invoked
  127  if COMMAND cannot be found
  137  if COMMAND (or timeout itself) is sent the KILL (9) signal (128+9)
  -    the exit status of COMMAND otherwise
`
