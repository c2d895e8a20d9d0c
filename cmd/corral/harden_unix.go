//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// hardenProcess keeps what corral serve creates and holds to itself:
// every file it creates is private to its user (umask 077), and on Linux
// it is not dumpable (see undumpable).
func hardenProcess() error {
	syscall.Umask(0o077)
	return undumpable()
}

// ownedBySelf reports whether fi belongs to this process's user, and its
// owner.
func ownedBySelf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, true
	}
	return st.Uid, int(st.Uid) == os.Geteuid()
}
