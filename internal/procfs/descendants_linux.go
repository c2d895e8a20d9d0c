package procfs

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Children returns the pids of the children of pid, live or zombie, read
// from /proc/PID/task/*/children (a child is listed under the thread that
// forked it; an orphan handed to a subreaper under its first live
// thread). It returns an error wrapping ErrGone when pid does not exist.
func Children(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil, ErrGone
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, ErrGone
	}
	var out []int
	buf := make([]byte, 4096)
	for _, tid := range tids {
		b, err := readAll(dir+"/"+tid+"/children", &buf)
		if err != nil {
			continue // the thread exited
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// readAll reads a /proc file of any length, growing *buf as needed.
func readAll(path string, buf *[]byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		m, err := unix.Read(fd, (*buf)[n:])
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return (*buf)[:n], nil
		}
		n += m
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
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, err := Children(p)
		if err != nil {
			continue
		}
		for _, c := range kids {
			if seen[c] {
				continue
			}
			seen[c] = true
			st, err := ReadStat(c)
			if err != nil || st.PPid != p {
				continue // gone, or reparented since the list was read
			}
			out = append(out, st)
			queue = append(queue, c)
		}
	}
	return out
}
