//go:build unix && !mutation_timeouttree

package main

import "syscall"

// signalTree sends sig to every process of the command's tree, escapees
// included; os.ErrProcessDone once the command has exited.
func (t *timeoutRun) signalTree(sig syscall.Signal) error {
	_, err := t.p.SignalTree(sig)
	return err
}
