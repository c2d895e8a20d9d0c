//go:build unix && !linux

package proc

import "syscall"

// cloexecPipe makes a pipe whose ends are closed on exec, under the fork
// lock so that no child started meanwhile inherits them.
func cloexecPipe() (p [2]int, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err = syscall.Pipe(p[:]); err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	return p, err
}
