//go:build !windows

package proc

import (
	"os"
	"syscall"
)

// outputPipe returns a pipe for one of the command's output streams. The
// read end is non-blocking and lives in the runtime's poller, so read
// deadlines bound the drain; the write end, handed to the child, is a plain
// blocking descriptor that never enters the poller.
func outputPipe() (r, w *os.File, err error) {
	p, err := cloexecPipe()
	if err != nil {
		return nil, nil, os.NewSyscallError("pipe", err)
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
