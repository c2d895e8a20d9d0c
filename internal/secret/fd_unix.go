//go:build unix

package secret

import (
	"regexp"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

var fdPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/(?:dev|proc/self)/fd/([0-9]+)$`) })

// closeInherited closes the descriptor a /dev/fd/N path names, past the
// standard three, when the process inherited it (it is not close-on-exec,
// as every descriptor Go opens is): its commands would inherit it too.
func closeInherited(path string) {
	m := fdPath().FindStringSubmatch(path)
	if m == nil {
		return
	}
	fd, err := strconv.Atoi(m[1])
	if err != nil || fd <= 2 {
		return
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
		unix.Close(fd)
	}
}
