//go:build !windows

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// holdSignals are dropped by corral headless (see runHeadlessTurn).
var holdSignals = []os.Signal{unix.SIGTSTP}

func isHoldSignal(s os.Signal) bool { return s == unix.SIGTSTP }
