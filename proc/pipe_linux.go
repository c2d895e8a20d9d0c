package proc

import "syscall"

func cloexecPipe() (p [2]int, err error) {
	err = syscall.Pipe2(p[:], syscall.O_CLOEXEC)
	return p, err
}
