package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/mutant"
)

// RaiseOpenFileLimit raises this process's soft RLIMIT_NOFILE to its hard
// limit, less one, once per process (Start and CheckCapacity call it),
// and returns the limit then in force. The commands corral starts keep
// the soft limit this program started with: the Go runtime raises its
// own limit the same way when a program starts, and gives every child it
// starts the original back as long as the soft limit is the hard one
// less one; a limit raised to the hard one itself would be inherited by
// every command (and a program using select(2) breaks past 1,024). The
// raise matters when something lowered the limit after the program
// started.
func RaiseOpenFileLimit() (soft, hard uint64, err error) {
	raiseOnce.Do(raiseNoFile)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	return lim.Cur, lim.Max, nil
}

// raiseNoFile raises the soft limit with the raw system call: the syscall
// package's own calls would make every child inherit the raised limit.
func raiseNoFile() {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Max == 0 || lim.Cur >= lim.Max-1 {
		return
	}
	lim.Cur = lim.Max - 1
	unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
}

// perRun returns what a run of s holds while its command runs:
// descriptors, processes.
func perRun(s *Spec) (fds, procs int64) {
	tier := s.Containment
	if tier == corral.ContainmentAuto {
		if _, err := cgroup.Detect(); err == nil {
			tier = corral.ContainmentCgroup
		}
	}
	inited := tier != corral.ContainmentCgroup || s.Sandbox.Enabled() || s.Enclosure != nil || s.Guard != nil
	fds, procs = cgroupFDsPerRun, cgroupProcessesPerRun
	if inited {
		fds, procs = ownInitFDsPerRun, ProcessesPerRun
		if s.Enclosure != nil {
			fds = FDsPerRun
		}
	}
	if s.Stdio != nil && !mutant.CapacitySpecBlind {
		fds -= 2 // no output pipe
	} else {
		if s.SpillDir != "" {
			fds += 2
		}
		if _, isFile := s.Stdin.(*os.File); s.Stdin != nil && !isFile {
			fds++
		}
	}
	return fds, procs
}

func checkCapacity(n int, s *Spec, callerFDs int64) error {
	RaiseOpenFileLimit()
	fdsEach, procsEach := perRun(s)
	if !mutant.CapacityBesideIgnored {
		fdsEach += callerFDs
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		used := int64(openFDs())
		if need := int64(n) * fdsEach; used+need > int64(lim.Cur) {
			return &limitError{what: "RLIMIT_NOFILE (the soft limit, raised to the hard one less one)", limit: int64(lim.Cur), used: used, need: need,
				unit: "file descriptors", fix: "raise the hard limit (ulimit -Hn, LimitNOFILE= of a systemd unit) or hold fewer runs at once"}
		}
	}
	need := int64(n) * procsEach
	if unix.Geteuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		// The user's processes and threads, all of them: counted from /proc.
		if used := userTasks(os.Getuid()); used+need > int64(lim.Cur) {
			return &limitError{what: "RLIMIT_NPROC", limit: int64(lim.Cur), used: used, need: need,
				unit: "processes", fix: "raise it (ulimit -u, LimitNPROC=) or hold fewer runs at once"}
		}
	}
	for _, dir := range pidsCgroups() {
		max, err1 := readInt(filepath.Join(dir, "pids.max"))
		cur, err2 := readInt(filepath.Join(dir, "pids.current"))
		if err1 == nil && err2 == nil && cur+need > max {
			return &limitError{what: "pids.max of the cgroup " + dir, limit: max, used: cur, need: need,
				unit: "processes", fix: "raise pids.max there (TasksMax= of a systemd unit, --pids-limit of a container) or hold fewer runs at once"}
		}
	}
	tasks := systemTasks()
	for _, k := range []string{"pid_max", "threads-max"} {
		if max, err := readInt("/proc/sys/kernel/" + k); err == nil && tasks >= 0 && tasks+need > max {
			return &limitError{what: "the kernel's " + k, limit: max, used: tasks, need: need,
				unit: "processes", fix: "raise /proc/sys/kernel/" + k + " or hold fewer runs at once"}
		}
	}
	return nil
}

// openFDs counts this process's open descriptors.
func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// pidsCgroups returns the cgroups whose pids.max counts the runs of this
// process: on the cgroup tier corral's own directory and those above it,
// otherwise this process's cgroup and those above it; and this process's
// cgroup of the version 1 pids controller, if one is mounted.
func pidsCgroups() []string {
	var dirs []string
	up := func(dir, mount string) {
		for d := dir; strings.HasPrefix(d, mount) && d != mount; d = filepath.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	if r, err := cgroup.Detect(); err == nil {
		up(r.Dir, r.Mount)
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return dirs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if r, err := cgroup.Detect(); err == nil {
				up(filepath.Join(r.Mount, parts[2]), r.Mount)
			}
		case strings.Contains(","+parts[1]+",", ",pids,"):
			up(filepath.Join("/sys/fs/cgroup/pids", parts[2]), "/sys/fs/cgroup/pids")
		}
	}
	return dirs
}

// systemTasks returns how many tasks (threads) the machine runs now, from
// /proc/loadavg's fourth field (running/total); -1 if unknown.
func systemTasks() int64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return -1
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// userTasks counts the threads of every process of uid: what
// RLIMIT_NPROC counts.
func userTasks(uid int) int64 {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var n int64
	want := strconv.Itoa(uid)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/status")
		if err != nil {
			continue
		}
		var real string
		var threads int64
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
		if real == want {
			n += threads
		}
	}
	return n
}

// readInt reads a file holding one integer, or "max" (no limit: an error).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, errors.New("no limit")
	}
	return strconv.ParseInt(s, 10, 64)
}

// limitCause wraps err, a failure to start a run, with the limit that
// caused it when it is one: too many open files (this process's
// RLIMIT_NOFILE, or the system's), or no process could be created (the
// first of CheckCapacity's process limits that is full). Other errors are
// returned as they are.
func limitCause(err error) error {
	switch {
	case errors.Is(err, syscall.EMFILE):
		var lim unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
		return fmt.Errorf("%w: %w: this process has %d descriptors open, RLIMIT_NOFILE is %d: raise the hard limit (ulimit -Hn) or hold fewer runs at once", err, ErrLimit, openFDs(), lim.Cur)
	case errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("%w: %w: the system's table of open files is full (fs.file-max)", err, ErrLimit)
	case errors.Is(err, syscall.EAGAIN):
		if cerr := checkCapacity(1, &Spec{}, 0); cerr != nil {
			return fmt.Errorf("%w: %w", err, cerr)
		}
		return fmt.Errorf("%w: %w: no process could be created (a process limit: RLIMIT_NPROC, a cgroup's pids.max, the kernel's pid_max or threads-max)", err, ErrLimit)
	}
	return err
}
