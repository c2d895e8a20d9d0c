//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestGNUDurationsReadAsGNUReadsThem(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10", 10 * time.Second, true}, {"1.5m", 90 * time.Second, true}, {"2h", 2 * time.Hour, true},
		{"1d", 24 * time.Hour, true}, {"0", 0, true}, {"0.1s", 100 * time.Millisecond, true},
		{" 10", 10 * time.Second, true}, {"1e1", 10 * time.Second, true}, {"0x10", 16 * time.Second, true},
		{"9.999999999", 9999999999, true}, {"1e-10000", 1, true}, {"inf", forever, true},
		{"infinity", forever, true}, {"1e400", forever, true}, {"2.34e+5d", forever, true},
		{"-0", 0, true}, {"-1", 0, false}, {" -0.1", 0, false}, {" -1e-10000", 0, false},
		{"nan", 0, false}, {"invalid", 0, false}, {"42D", 0, false}, {"1ss", 0, false}, {"", 0, false},
		{"1.", time.Second, true}, {".5", 500 * time.Millisecond, true}, {"1e", 0, false},
	}
	for _, c := range cases {
		got, err := parseGNUDuration(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseGNUDuration(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestGNUSignalsReadAsGNUReadsThem(t *testing.T) {
	cases := []struct {
		in   string
		want syscall.Signal
		ok   bool
	}{
		{"TERM", syscall.SIGTERM, true}, {"sigkill", syscall.SIGKILL, true}, {"Usr1", syscall.SIGUSR1, true},
		{"9", syscall.SIGKILL, true}, {"137", syscall.SIGKILL, true}, {"0", 0, true}, {"EXIT", 0, true},
		{"IOT", syscall.SIGABRT, true}, {"CLD", syscall.SIGCHLD, true}, {"SIG15", syscall.SIGTERM, true},
		{"RTMIN", 34, true}, {"rtmin+2", 36, true}, {"RTMAX-1", 63, true}, {"RTMIN+31", 0, false},
		{"BOGUS", 0, false}, {"", 0, false}, {"9x", 0, false}, {"100", 0, false},
	}
	for _, c := range cases {
		got, ok := gnuOperandSignal(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("gnuOperandSignal(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for sig, name := range map[syscall.Signal]string{0: "0", syscall.SIGKILL: "KILL", syscall.SIGABRT: "ABRT", 36: "RTMIN+2", 63: "RTMAX-1"} {
		if got := gnuSignalName(sig); got != name {
			t.Errorf("gnuSignalName(%d) = %q, want %q", sig, got, name)
		}
	}
}

func TestTimeoutCommandLineIsGNUs(t *testing.T) {
	cases := []struct {
		args   []string
		errMsg string // "" for a command line that parses
		check  func(*timeoutRun) bool
	}{
		{[]string{"-pvsKILL", "-k5", "1", "cmd", "-x"}, "", func(r *timeoutRun) bool {
			return r.preserve && r.verbose && r.signal == syscall.SIGKILL && r.killAfter == 5*time.Second && r.duration == time.Second && strings.Join(r.command, " ") == "cmd -x"
		}},
		{[]string{"--sig=HUP", "--kill", "2", "--pres", "--fore", "3", "cmd"}, "", func(r *timeoutRun) bool {
			return r.signal == syscall.SIGHUP && r.killAfter == 2*time.Second && r.preserve && r.foreground
		}},
		{[]string{"1", "cmd", "-s", "KILL"}, "", func(r *timeoutRun) bool { return r.signal == syscall.SIGTERM && len(r.command) == 3 }},
		{[]string{"--", "1", "cmd"}, "", func(r *timeoutRun) bool { return len(r.command) == 1 }},
		{[]string{"--v", "1", "cmd"}, "timeout: option '--v' is ambiguous; possibilities: '--verbose' '--version'", nil},
		{[]string{"--foo", "1", "cmd"}, "timeout: unrecognized option '--foo'", nil},
		{[]string{"-x", "1", "cmd"}, "timeout: invalid option -- 'x'", nil},
		{[]string{"-k"}, "timeout: option requires an argument -- 'k'", nil},
		{[]string{"--signal"}, "timeout: option '--signal' requires an argument", nil},
		{[]string{"--verbose=1", "1", "cmd"}, "timeout: option '--verbose' doesn't allow an argument", nil},
		{[]string{"-s", "BOGUS", "1", "cmd"}, "timeout: 'BOGUS': invalid signal", nil},
		{[]string{"1x", "cmd"}, "timeout: invalid time interval '1x'", nil},
	}
	t.Setenv("LC_ALL", "C")
	for _, c := range cases {
		var out, errb strings.Builder
		r, code, done := parseTimeoutArgs("timeout", c.args, &out, &errb)
		switch {
		case c.errMsg == "" && (done || !c.check(r)):
			t.Errorf("%q: parsed as %+v (done %v, stderr %q)", c.args, r, done, errb.String())
		case c.errMsg != "" && (!done || code != 125 || errb.String() != c.errMsg+"\nTry 'timeout --help' for more information.\n"):
			t.Errorf("%q: exit %d, stderr %q; want 125 and %q", c.args, code, errb.String(), c.errMsg)
		}
	}
	var out strings.Builder
	if _, code, done := parseTimeoutArgs("timeout", []string{"--help"}, &out, &out); !done || code != 0 || !strings.HasPrefix(out.String(), "Usage: timeout [OPTION] DURATION COMMAND") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
}
