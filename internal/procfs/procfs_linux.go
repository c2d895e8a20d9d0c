// Package procfs reads the few facts corral needs about processes from
// /proc: parentage, process group, session, state and start time. A start
// time together with a pid names one process for good, so callers can tell a
// recycled pid from the process they meant.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
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
	Flags   uint32 // the kernel's PF_* flags of the process
}

// Kernel reports whether the process is a kernel thread.
func (s Stat) Kernel() bool { return s.Flags&pfKthread != 0 }

// pfKthread is the kernel's PF_KTHREAD flag (include/linux/sched.h).
const pfKthread = 0x00200000

// Zombie reports whether the process has exited and waits to be reaped (or
// is already being torn down).
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// pfExiting is the kernel's PF_EXITING flag (include/linux/sched.h): the
// task is in the kernel's exit.
const pfExiting = 0x00000004

// Exiting reports whether the process is on its way out by itself: a
// zombie, or a process of one thread that is in the kernel's exit, which
// runs none of its own code any more, can start nothing and is past the
// reach of any signal. Its descriptors close in that exit: a reader that
// saw its pipes end may find it there a moment later. (A process of more
// threads whose main thread exits goes on with the others: only one of a
// single thread is known to be going.)
func (s Stat) Exiting() bool {
	return s.Zombie() || s.Flags&pfExiting != 0 && s.Threads <= 1 && !mutant.ExitingSignalled
}

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
	// Field 9 (flags) is f[6], field 20 (num_threads) f[17], field 22 (starttime) f[19].
	flags, err := strconv.ParseUint(string(f[6]), 10, 32)
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat flags: %w", err)
	}
	s.Flags = uint32(flags)
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
//
// A process in the middle of an execve has, for a moment, neither command
// line nor environment to read, and a read that straddles the exec finds
// the old image's gone: a loaded machine stretches that moment to
// milliseconds. The kernel lays out the new environment's pointers last,
// page by page (a fault on each may wait), and only then places the
// program's code: until then the environment reads empty. HasToken
// answers no only when the image it read was whole and stayed put around
// the reads (where the process's stat places its code, command line and
// environment, the code placed, the same before and after, and the
// environment read in full), and otherwise looks again, up to execWait.
func HasToken(pid int, token string) bool {
	t := []byte(token)
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	deadline := time.Now().Add(execWait)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		st, before, err := readImage(pid)
		if err != nil || st.Zombie() || st.Kernel() {
			return false // gone, exited, or a kernel thread: none carries a token
		}
		cmdline, cmdErr := os.ReadFile(dir + "cmdline")
		env, envErr := os.ReadFile(dir + "environ")
		if bytes.Contains(cmdline, t) || bytes.Contains(env, t) {
			return true
		}
		if errors.Is(envErr, fs.ErrPermission) {
			return false // not this process's to read
		}
		_, after, err := readImage(pid)
		if err != nil {
			return false
		}
		settled := cmdErr == nil && envErr == nil && before == after && before.envEnd != 0 && before.code != 0 &&
			uint64(len(env)) == before.envEnd-before.envStart
		if settled || mutant.TokenMidExec || time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// execWait bounds how long HasToken waits for a process mid-exec to lay
// out its new image.
const execWait = time.Second

// image is where a process's code, command line and environment lie in
// its memory: all zero while it has none (mid-exec, exiting), and for a
// process this one may not trace; code is zero too while an exec lays out
// the new environment (it is placed after).
type image struct{ code, argStart, argEnd, envStart, envEnd uint64 }

// readImage reads the process's stat, and its image from fields 26
// (startcode) and 48 to 51 (arg_start to env_end, proc(5)).
func readImage(pid int) (Stat, image, error) {
	var buf [1024]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return Stat{}, image{}, err
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, image{}, err
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 49 { // field 3 (state) is f[0]
		return Stat{}, image{}, fmt.Errorf("stat of %d has %d fields, not 51", pid, len(f)+2)
	}
	var v [4]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(string(f[45+i]), 10, 64); err != nil {
			return Stat{}, image{}, fmt.Errorf("malformed stat field %d: %w", 48+i, err)
		}
	}
	code, err := strconv.ParseUint(string(f[23]), 10, 64) // field 26, startcode
	if err != nil {
		return Stat{}, image{}, fmt.Errorf("malformed stat field 26: %w", err)
	}
	return st, image{code, v[0], v[1], v[2], v[3]}, nil
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
// meant) before the first signal. A process that the first signal reached
// was signalled: that it died of it and was reaped before the next one (a
// SIGCONT after a SIGTERM, on a machine that ran its exit and its parent's
// wait in between) is its end, not its absence, and SignalIf returns nil.
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
	for i, sig := range sigs {
		if i > 0 && betweenSignals != nil {
			betweenSignals(pid)
		}
		if fd >= 0 {
			err = unix.PidfdSendSignal(fd, sig, nil, 0)
		} else {
			err = unix.Kill(pid, sig)
		}
		switch {
		case errors.Is(err, unix.ESRCH) && i > 0 && !mutant.LaterSignalGone:
			return nil // gone since an earlier signal reached it
		case errors.Is(err, unix.ESRCH):
			return ErrGone
		case err != nil:
			return err
		}
	}
	return nil
}

// betweenSignals, when set (by a test), runs before each signal of
// SignalIf after the first.
var betweenSignals func(pid int)

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
