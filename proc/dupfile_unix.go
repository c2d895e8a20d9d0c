//go:build unix

package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// dupFile returns a duplicate of f's descriptor, close-on-exec, blocking
// as f is.
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := rc.Control(func(d uintptr) { fd, derr = unix.FcntlInt(d, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
