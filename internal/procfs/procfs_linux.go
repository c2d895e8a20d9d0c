// Package procfs reads the few facts corral needs about processes from
// /proc: parentage, process group, session, state and start time. A start
// time together with a pid names one process for good, so callers can tell a
// recycled pid from the process they meant.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Stat is what /proc/PID/stat says of one process.
type Stat struct {
	Pid     int
	PPid    int
	Pgid    int
	Sid     int
	State   byte   // R, S, D, Z, T, t, X, ...
	Threads int    // how many threads it has
	Start   uint64 // start time in clock ticks after boot; with Pid it names the process
	Comm    string
}

// Zombie reports whether the process has exited and waits to be reaped (or
// is already being torn down).
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// Stopped reports whether the process is stopped by a signal or a tracer.
func (s Stat) Stopped() bool { return s.State == 'T' || s.State == 't' }

// ErrGone reports that the process does not exist (any more).
var ErrGone = errors.New("process gone")

// ReadStat reads /proc/PID/stat. It returns an error wrapping ErrGone when
// the process does not exist.
func ReadStat(pid int) (Stat, error) {
	var buf [1024]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// ParseStat parses the contents of a /proc/PID/stat file. The command name
// may hold spaces and parentheses; the last ')' ends it.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || end+2 >= len(b) {
		return Stat{}, fmt.Errorf("malformed stat %q", truncate(b))
	}
	var s Stat
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat pid %q", truncate(b))
	}
	s.Pid = pid
	s.Comm = string(b[open+1 : end])
	// Fields after the name, counted from 3 (state) as in proc(5), up to
	// 22 (starttime), read in place: a supervisor reads the stat of every
	// process of a tree it walks.
	var f [20][]byte
	rest := b[end+2:]
	for i := range f {
		rest = bytes.TrimLeft(rest, " ")
		j := bytes.IndexAny(rest, " \n")
		if j < 0 {
			j = len(rest)
		}
		if j == 0 {
			return Stat{}, fmt.Errorf("malformed stat: %d fields after name", i)
		}
		f[i], rest = rest[:j], rest[j:]
	}
	s.State = f[0][0]
	ints := [...]*int{&s.PPid, &s.Pgid, &s.Sid}
	for i, p := range ints {
		if *p, err = atoi(f[1+i]); err != nil {
			return Stat{}, fmt.Errorf("malformed stat field %d: %w", 4+i, err)
		}
	}
	// Field 20 (num_threads) is f[17], field 22 (starttime) f[19].
	if s.Threads, err = atoi(f[17]); err != nil {
		return Stat{}, fmt.Errorf("malformed stat num_threads: %w", err)
	}
	if s.Start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("malformed stat starttime: %w", err)
	}
	return s, nil
}

// atoi parses a decimal int without a copy.
func atoi(b []byte) (int, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("bad number %q", b)
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number %q", b)
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Scan returns the stat of every process that exists now. Processes that
// vanish while being read are skipped.
func Scan() ([]Stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]Stat, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		s, err := ReadStat(pid)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// Cgroup2 returns the cgroup v2 path of the process ("/corral/x"), read from
// the "0::" line of /proc/PID/cgroup. For a zombie it is the cgroup the
// process exited in.
func Cgroup2(pid int) (string, error) {
	var buf [2048]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/cgroup", buf[:])
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("process %d has no cgroup v2 entry", pid)
}

// HasToken reports whether token occurs in the command line or in the
// initial environment of the process. Tests use it to find the processes
// they tagged; a process that replaced its image with a clean environment
// and argv no longer carries the token.
func HasToken(pid int, token string) bool {
	t := []byte(token)
	for _, f := range [...]string{"cmdline", "environ"} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + f)
		if err == nil && bytes.Contains(b, t) {
			return true
		}
	}
	return false
}

// readSmall reads a small /proc file into buf with one read. It goes
// straight to the system calls: a supervisor reads such files for every
// process of a tree it signals, and os.File's bookkeeping (the poller,
// finalizers) would cost more than the reads.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%s: %w", path, ErrGone)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf)
	}
	if err != nil {
		// ESRCH from a process exiting under us reads as gone.
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrGone, err)
	}
	return buf[:n], nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// Signal sends sigs, in order, to the process pid only if it is still the
// process that started at start (clock ticks after boot, as in
// Stat.Start). It returns an error wrapping ErrGone when the process is not
// there any more.
func Signal(pid int, start uint64, sigs ...unix.Signal) error {
	return SignalIf(pid, func() bool {
		st, err := ReadStat(pid)
		return err == nil && st.Start == start
	}, sigs...)
}

// SignalIf sends sigs, in order, to the process pid only if same reports,
// after the process was pinned with a pidfd, that pid is still the process
// meant. A pid recycled before the pin fails the check; one recycled after
// it is not reached, because the signals go through the pidfd. It returns
// an error wrapping ErrGone when the process is not there (or not the one
// meant).
func SignalIf(pid int, same func() bool, sigs ...unix.Signal) error {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return ErrGone
	case errors.Is(err, unix.ENOSYS):
		fd = -1 // kernel before 5.3: check, then kill; the best it offers
	case err != nil:
		return err
	default:
		defer unix.Close(fd)
	}
	if !same() {
		return ErrGone
	}
	for _, sig := range sigs {
		if fd >= 0 {
			err = unix.PidfdSendSignal(fd, sig, nil, 0)
		} else {
			err = unix.Kill(pid, sig)
		}
		if errors.Is(err, unix.ESRCH) {
			return ErrGone
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Memory returns a memory figure of /proc/PID/status in bytes: field is its
// name, such as "VmRSS" (resident now) or "VmHWM" (peak resident). Pid 0 is
// the calling process.
func Memory(pid int, field string) (int64, error) {
	dir := "self"
	if pid != 0 {
		dir = strconv.Itoa(pid)
	}
	b, err := os.ReadFile("/proc/" + dir + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procfs: %s of %s: %w", field, dir, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("procfs: no %s in /proc/%s/status", field, dir)
}
