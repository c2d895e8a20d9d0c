//go:build unix

package proc

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalName returns the conventional name of sig, such as "SIGKILL" or,
// on Linux, "SIGRTMIN+2".
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	if runtime.GOOS == "linux" && sig >= sigRTMin && sig <= sigRTMax {
		if sig <= (sigRTMin+sigRTMax)/2 {
			return "SIGRTMIN+" + strconv.Itoa(int(sig-sigRTMin))
		}
		return "SIGRTMAX-" + strconv.Itoa(int(sigRTMax-sig))
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// The real-time signals as the C library the commands use numbers them:
// glibc keeps the kernel's first two for itself.
const (
	sigRTMin = 34
	sigRTMax = 64
)

// ParseSignal parses a signal: a name in any case, with or without "SIG"
// ("TERM", "sigterm"), RTMIN, RTMIN+N, RTMAX or RTMAX-N on Linux, or a
// number of a signal the system has. Anything else, 0 and numbers beyond
// the last signal included, is an error that lists the accepted forms.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n > 0 && syscall.Signal(n) <= lastSignal() {
			return syscall.Signal(n), nil
		}
		return 0, badSignal(s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	if sig, ok := rtSignal(name[3:]); ok {
		return sig, nil
	}
	return 0, badSignal(s)
}

// badSignal says what is wrong and what would be right.
func badSignal(s string) error {
	rt := ""
	if runtime.GOOS == "linux" {
		rt = ", RTMIN+2"
	}
	return fmt.Errorf("unknown signal %q: give a name (TERM, int, SIGUSR1%s) or a number from 1 to %d", s, rt, lastSignal())
}

func lastSignal() syscall.Signal {
	if runtime.GOOS == "linux" {
		return sigRTMax
	}
	return 31
}

// rtSignal reads RTMIN, RTMIN+N, RTMAX and RTMAX-N on Linux.
func rtSignal(name string) (syscall.Signal, bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	for _, b := range []struct {
		name     string
		at, sign int
	}{{"RTMIN", sigRTMin, 1}, {"RTMAX", sigRTMax, -1}} {
		rest, ok := strings.CutPrefix(name, b.name)
		if !ok {
			continue
		}
		n := 0
		if rest != "" {
			v, err := strconv.Atoi(rest)
			if err != nil || (rest[0] != '+' && rest[0] != '-') || v*b.sign < 0 || v*b.sign > sigRTMax-sigRTMin {
				return 0, false
			}
			n = v
		}
		return syscall.Signal(b.at + n), true
	}
	return 0, false
}
