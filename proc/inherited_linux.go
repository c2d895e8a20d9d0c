package proc

import (
	"bytes"
	"hash/maphash"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
)

// An init passes on to its command what it inherited from this process
// when it was started: the user and groups it runs as and their
// capabilities, no_new_privs and a seccomp filter, the file mode creation
// mask, the resource limits, the OOM score adjustment. An idle init
// started before this process changed one of them (a service that drops
// root, sets its umask or raises a limit after its first runs) would
// start the next command with the old one, where a direct child gets the
// new: the pool hands out only inits started in the state this process is
// in now (inheritedState), and lets go of the others. Per-thread
// attributes (the nice value, the CPU affinity) a direct child takes from
// whichever thread forks it, and are left out; so is this process's
// cgroup (moving a supervisor is rare, and the read would cost 10 µs a
// take; the cgroup tier gives each command its own). An enclosure's runs are forked by its holder, and start with
// the state the enclosure was made in, as the commands of a session do.

// inheritedSeed keys inheritedState's hash for this process.
var inheritedSeed = maphash.MakeSeed()

// inheritedLines are the lines of /proc/self/status that say what a child
// inherits: credentials, capabilities, no_new_privs, seccomp, umask.
var inheritedLines = [][]byte{[]byte("Umask:"), []byte("Uid:"), []byte("Gid:"), []byte("Groups:"),
	[]byte("CapInh:"), []byte("CapPrm:"), []byte("CapEff:"), []byte("CapBnd:"), []byte("CapAmb:"),
	[]byte("NoNewPrivs:"), []byte("Seccomp:"), []byte("Seccomp_filters:")}

// inheritedState returns a digest of the state a child of this process
// inherits and an init would hold from its own start: inheritedLines of
// /proc/self/status, /proc/self/limits and /proc/self/oom_score_adj, each
// read whole with a few system calls (30–35 µs in all on a small VM); 0
// when none can be read.
func inheritedState() uint64 {
	if mutant.InheritUnchecked {
		return 0
	}
	var buf [4096]byte
	var h maphash.Hash
	h.SetSeed(inheritedSeed)
	st := readSmall("/proc/self/status", buf[:])
	for len(st) > 0 {
		line := st
		if j := bytes.IndexByte(st, '\n'); j >= 0 {
			line, st = st[:j+1], st[j+1:]
		} else {
			st = nil
		}
		for _, p := range inheritedLines {
			if bytes.HasPrefix(line, p) {
				h.Write(line)
				break
			}
		}
	}
	h.Write(readSmall("/proc/self/limits", buf[:]))
	h.Write(readSmall("/proc/self/oom_score_adj", buf[:]))
	return h.Sum64()
}

// readSmall reads a small file whole into buf (up to its size), or
// returns nothing.
func readSmall(path string, buf []byte) []byte {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return buf[:n]
}
