package main

import "golang.org/x/sys/unix"

// undumpable makes the process not dumpable, so that a task running as
// the same user cannot read its environment (/proc/PID/environ, where
// CORRAL_TOKEN and CORRAL_DB may be) or its memory, nor trace it. The
// tasks it starts are dumpable again once they exec.
func undumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
