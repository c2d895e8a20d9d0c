//go:build unix

package main

import (
	"os"
	"syscall"
)

// execCompanion executes path in this process's place: the same pid,
// descriptors and environment, as if corral had been it.
func execCompanion(path string, args []string) error {
	return &os.PathError{Op: "exec", Path: path, Err: syscall.Exec(path, append([]string{path}, args...), os.Environ())}
}

// exeSuffix ends the file name of a program.
const exeSuffix = ""

// runnable reports whether the file fi may be executed.
func runnable(fi os.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
