package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
)

// execCompanion runs path with corral's standard streams and environment
// and exits with its status: Windows has no exec. A Ctrl-C reaches the
// companion too, which decides what it means (corral submit --wait stops
// waiting and exits 130); corral catches it and waits, or Windows would
// end corral at once with a status of its own, the companion still running.
func execCompanion(path string, args []string) error {
	signal.Notify(make(chan os.Signal, 1), os.Interrupt) // never read: caught and dropped
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err == nil {
		os.Exit(0)
	}
	return err
}

// exeSuffix ends the file name of a program.
const exeSuffix = ".exe"

// runnable reports whether the file fi may be executed: on Windows its
// name says so.
func runnable(os.FileInfo) bool { return true }
