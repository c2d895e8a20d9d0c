//go:build unix

package main

import (
	"syscall"
	"time"

	"github.com/corralrun/corral/bench/internal/benchutil"
)

// cpu returns the user and system time this process has used.
func cpu() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// childCPU returns the user and system time of this process's children
// that ended and were waited for.
func childCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	benchutil.Check(syscall.Getrusage(who, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
