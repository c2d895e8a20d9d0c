package benchutil

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Settle puts each program at paths (a directory: every file in it) in the
// state of one installed long ago: written to disk and dropped from the
// page cache, so that its first start reads it back as any program is
// read. A program just written by the linker, by cp or by one large write
// sits in the page cache in pieces of different sizes, and how many page
// faults its start takes depends on them: on a 2-core VM the same corral
// binary took 247, 274 and 303 page faults, and 7.3 to 11.1 ms, by how
// its file had been written (docs/benchmarks.md). Errors are ignored: a
// program that cannot be settled is measured as it is.
func Settle(paths ...string) {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				if e.Type().IsRegular() {
					Settle(filepath.Join(p, e.Name()))
				}
			}
			continue
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		unix.Fsync(fd)
		unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
		unix.Close(fd)
	}
}
