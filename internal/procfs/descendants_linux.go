package procfs

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
)

// Children returns the pids of the children of pid, live or zombie, read
// from /proc/PID/task/*/children (a child is listed under the thread that
// forked it; an orphan handed to a subreaper under its first live
// thread). It returns an error wrapping ErrGone when pid does not exist.
func Children(pid int) ([]int, error) {
	buf := make([]byte, 4096)
	return children(pid, 0, &buf, nil)
}

// children appends the children of pid to out. With threads 1 (a process
// known to have one thread) only that thread's list is read; otherwise
// every thread's.
func children(pid, threads int, buf *[]byte, out []int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids := []string{strconv.Itoa(pid)}
	if threads != 1 {
		d, err := os.Open(dir)
		if err != nil {
			return out, ErrGone
		}
		tids, err = d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return out, ErrGone
		}
	}
	for _, tid := range tids {
		b, err := readAll(dir+"/"+tid+"/children", buf)
		if err != nil {
			if threads == 1 {
				return out, ErrGone
			}
			continue // the thread exited
		}
		for len(b) > 0 {
			b = bytes.TrimLeft(b, " \n")
			j := bytes.IndexAny(b, " \n")
			if j < 0 {
				j = len(b)
			}
			if c, err := atoi(b[:j]); err == nil {
				out = append(out, c)
			}
			b = b[j:]
		}
	}
	return out, nil
}

// readAll reads a /proc file of any length, growing *buf as needed.
func readAll(path string, buf *[]byte) ([]byte, error) {
	b, err := ReadFile(path, (*buf)[:0])
	if err != nil {
		return nil, err
	}
	*buf = b[:cap(b)]
	return b, nil
}

// ReadFile appends the whole of the kernel file at path (a /proc or cgroup
// file, of any length) to buf and returns it. It makes only the open, read
// and close system calls, none of os.File's: such files are read many
// times a run, and the runtime's poller cannot wait on them anyway.
func ReadFile(path string, buf []byte) ([]byte, error) {
	var fd int
	var err error
	for {
		if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return buf, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if cap(buf) == 0 {
		buf = make([]byte, 0, 512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Descendants returns every process below pid (its children, their
// children, and so on), live or zombie, with their stat, in no particular
// order. A walk is not a snapshot: a process may fork after its children
// were listed. Callers that must see everything freeze what they found and
// walk again, or compare two walks.
func Descendants(pid int) []Stat {
	var out []Stat
	seen := map[int]bool{pid: true}
	type node struct{ pid, threads int }
	queue := []node{{pid, 0}}
	buf := make([]byte, 4096)
	var kids []int
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		var err error
		if kids, err = children(p.pid, p.threads, &buf, kids[:0]); err != nil {
			continue
		}
		for _, c := range kids {
			if seen[c] {
				continue
			}
			seen[c] = true
			st, err := ReadStat(c)
			if err != nil || st.PPid != p.pid {
				continue // gone, or reparented since the list was read
			}
			out = append(out, st)
			queue = append(queue, node{c, st.Threads})
		}
	}
	return out
}

// FreezeKill kills the processes list returns (it is called again and
// again; those already on their way out, zombies or exiting (see
// Stat.Exiting), are neither signalled nor counted) so that none can fork a child
// that escapes: they are stopped with SIGSTOP, round after round until a
// round finds none not yet stopped, then killed; a last look kills
// anything that slipped past the freeze. Every signal goes through a pidfd
// checked against the start time. It returns the processes it killed,
// each once.
func FreezeKill(list func() []Stat) []Stat {
	type key struct {
		pid   int
		start uint64
	}
	stopped := map[key]Stat{}
	for round := 0; round < 64; round++ {
		fresh := 0
		for _, st := range list() {
			k := key{st.Pid, st.Start}
			if _, ok := stopped[k]; ok || st.Exiting() {
				continue
			}
			if Signal(st.Pid, st.Start, unix.SIGSTOP) == nil {
				stopped[k] = st
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	var out []Stat
	for _, st := range stopped {
		if Signal(st.Pid, st.Start, unix.SIGKILL) == nil {
			out = append(out, st)
		}
	}
	for _, st := range list() {
		if _, ok := stopped[key{st.Pid, st.Start}]; ok && !mutant.KilledTwice {
			continue // killed above, still dying
		}
		if !st.Exiting() && Signal(st.Pid, st.Start, unix.SIGKILL) == nil {
			out = append(out, st)
		}
	}
	return out
}
