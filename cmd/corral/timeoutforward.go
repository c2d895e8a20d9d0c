//go:build unix && !mutation_timeoutforward

package main

import "syscall"

// forward passes a signal this process got on to the whole tree, as
// itself.
func (t *timeoutRun) forward(s syscall.Signal) { t.send(s) }
