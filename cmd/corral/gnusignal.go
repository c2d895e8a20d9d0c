//go:build unix

package main

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/corralrun/corral/proc"
)

// gnuSignalNames lists signal names in the order GNU's sig2str prefers
// them (ABRT before IOT, POLL before IO), with their aliases; a name the
// system lacks is skipped.
var gnuSignalNames = []string{
	"HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "FPE", "KILL", "SEGV", "BUS",
	"PIPE", "ALRM", "TERM", "USR1", "USR2", "CHLD", "URG", "STOP", "TSTP",
	"CONT", "TTIN", "TTOU", "SYS", "POLL", "VTALRM", "PROF", "XCPU", "XFSZ",
	"IOT", "EMT", "CLD", "PWR", "WINCH", "INFO", "IO", "STKFLT",
}

// gnuSignalAlias names a signal under the name x/sys/unix knows it by.
var gnuSignalAlias = map[string]string{"IOT": "ABRT", "CLD": "CHLD", "POLL": "IO"}

// signalNamed returns the signal NAME (upper case, without "SIG") names
// as GNU's str2sig reads it: "EXIT" for 0, GNU's aliases, and the names
// proc.ParseSignal knows (RTMIN+N and RTMAX-N included).
func signalNamed(name string) (syscall.Signal, bool) {
	if name == "EXIT" {
		return 0, true
	}
	if a, ok := gnuSignalAlias[name]; ok {
		name = a
	}
	if strings.HasPrefix(name, "SIG") || (name != "" && name[0] >= '0' && name[0] <= '9') {
		return 0, false
	}
	sig, err := proc.ParseSignal(name)
	return sig, err == nil
}

// gnuSignalName is GNU's sig2str: the preferred name without "SIG"
// (RTMIN+N, RTMAX-N), or the number when the signal has none.
func gnuSignalName(sig syscall.Signal) string {
	if sig == 0 {
		return "0"
	}
	for _, n := range gnuSignalNames {
		if s, ok := signalNamed(n); ok && s == sig {
			return n
		}
	}
	if n := proc.SignalName(sig); !strings.HasPrefix(n, "SIG") || n[3] < '0' || n[3] > '9' {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}

// gnuOperandSignal reads a signal as GNU timeout's -s does (operand2sig):
// a number, which like a shell's $? may carry 128 or 256 on top of the
// signal ("137" is KILL); or a name in any case, with or without "SIG".
func gnuOperandSignal(s string) (syscall.Signal, bool) {
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return 0, false
		}
		if n >= 0xFF {
			n &= 0xFF
		} else {
			n &= 0x7F
		}
		if n == 0 {
			return 0, true
		}
		_, err = proc.ParseSignal(strconv.Itoa(int(n)))
		return syscall.Signal(n), err == nil
	}
	up := strings.ToUpper(s)
	if sig, ok := signalNamed(up); ok {
		return sig, true
	}
	if rest, ok := strings.CutPrefix(up, "SIG"); ok {
		if n, err := strconv.Atoi(rest); err == nil && rest[0] != '+' && rest[0] != '-' {
			_, perr := proc.ParseSignal(rest)
			return syscall.Signal(n), n == 0 || perr == nil
		}
		return signalNamed(rest)
	}
	return 0, false
}
