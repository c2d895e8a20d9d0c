//go:build unix

package secret

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
)

// closeInherited closes the descriptor a /dev/fd/N path names, past the
// standard three, when the process inherited it (it is not close-on-exec,
// as every descriptor Go opens is): its commands would inherit it too.
func closeInherited(path string) {
	fd, ok := fdNumber(path)
	if !ok || fd <= 2 || mutant.SecretFDKept {
		return
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
		unix.Close(fd)
	}
}

// fdNumber returns N of a path /dev/fd/N or /proc/self/fd/N (N decimal
// digits only). It is matched by hand: corral links no regexp package,
// whose tables every start of corral would initialise.
func fdNumber(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/dev/fd/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/proc/self/fd/")
	}
	if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, false
	}
	return n, true
}
