//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// hardenProcess makes every file corral serve creates private to its
// user (umask 077).
func hardenProcess() error {
	syscall.Umask(0o077)
	return nil
}

// hideMemory makes the process not dumpable (see undumpable), unless it
// runs unprivileged and guards its tasks: a guarded task cannot see the
// service at all, and a process that is not dumpable cannot map the ids of
// the user namespaces its guarded and sandboxed runs need (the kernel
// gives its /proc files, uid_map among them, to root).
func hideMemory(guarded bool) error {
	if guarded && os.Geteuid() != 0 {
		return nil
	}
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
