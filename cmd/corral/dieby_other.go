//go:build unix && !linux

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// dieBySignal ends this process by sig where the Go runtime lets it:
// SIGHUP, SIGINT and SIGTERM, reset to their default. For other signals it
// returns, and the caller exits with 128+sig.
func dieBySignal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM:
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal ends the process meanwhile
	}
}
