//go:build unix

package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// sweepPipeMax bounds a sweep: what a pipe can hold (64 KiB by default, up
// to 1 MiB), so that a writer still going cannot keep it reading.
const sweepPipeMax = 1 << 20

// sweepPipe reads what the non-blocking pipe r holds now, without waiting
// for more, into b and hands each piece to take.
func sweepPipe(r *os.File, b []byte, take func([]byte)) {
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	for left := sweepPipeMax; left > 0; {
		var n int
		var rerr error
		if err := rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), b[:min(len(b), left)]) }); err != nil {
			return
		}
		if n <= 0 || rerr != nil {
			return // empty (EAGAIN), closed, or failed
		}
		take(b[:n])
		left -= n
	}
}
