package executor

import (
	"os"

	"golang.org/x/sys/unix"
)

// memFile creates an anonymous file in memory (memfd_create), closed on
// exec: it is passed to a run only as one of its standard files.
func memFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
