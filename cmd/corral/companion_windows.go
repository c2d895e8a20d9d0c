package main

import (
	"errors"
	"os"
	"os/exec"
)

// execCompanion runs path with corral's standard streams and environment
// and exits with its status: Windows has no exec.
func execCompanion(path string, args []string) error {
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
