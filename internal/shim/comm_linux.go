package shim

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// nameSelf names the calling thread (the main thread, while packages
// initialise) Comm: the name /proc/PID/stat shows for the process, which
// it keeps as a zombie.
func nameSelf() {
	b := append([]byte(Comm), 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
