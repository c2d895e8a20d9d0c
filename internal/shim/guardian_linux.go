package shim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/guardelf"
	"github.com/corralrun/corral/internal/initelf"
	"github.com/corralrun/corral/internal/mutant"
)

// guardianDirEnv names, for the Go guardian, the cgroup directory of the
// corral process it guards (cgroup.Root.Owner).
const guardianDirEnv = "CORRAL_SHIM_CGROUP_DIR"

// runGuardian is the Go guardian: it waits for corral to go, then kills
// every leaf in its directory, waits for them to empty and removes them.
// It keeps the native guardian's contract (internal/guardelf) where that
// one cannot run.
func runGuardian() int {
	dir := os.Getenv(guardianDirEnv)
	if dir == "" {
		fmt.Fprintln(os.Stderr, "corral shim: guardian without its cgroup directory")
		return ExitShimFailed
	}
	// Only the end of corral's pipe ends the guardian (or SIGKILL).
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE)
	io.Copy(io.Discard, os.Stdin)
	if mutant.BindingOff {
		return 0
	}
	cgroup.KillOwner(dir)
	cgroup.RemoveOwner(dir, time.Now().Add(2*time.Second))
	return 0
}

// Guardian is the guardian of this process's cgroup leaves, once started.
type Guardian struct {
	w      *os.File
	pid    int
	native bool
}

// StartGuardian starts the guardian of dir, this process's own cgroup
// directory (cgroup.Root.Owner), which every leaf it makes is in: the
// native guardian (internal/guardelf) where this machine has one and can
// execute it and the kernel offers cgroup.kill, else the program that
// program returns (this program or its companion, see internal/shimprog;
// only asked for then) in the guardian's role. It
// lives as long as this process, in a session of its own so that a
// terminal's signals do not reach it, and when this process is gone it
// kills every process of every leaf still in dir at once.
func StartGuardian(program func() string, dir string) (*Guardian, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("guardian: %w", err)
	}
	defer r.Close()
	g := &Guardian{w: w, native: true}
	g.pid, err = startNativeGuardian(dir, r)
	if err != nil {
		g.native = false
		g.pid, err = syscall.ForkExec(program(), []string{Comm}, &syscall.ProcAttr{
			Dir:   "/",
			Env:   Environ(RoleGuardian, guardianDirEnv+"="+dir),
			Files: []uintptr{r.Fd(), devNull(), devNull()},
			Sys:   &syscall.SysProcAttr{Setsid: true},
		})
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("guardian: starting it: %w", err)
	}
	Keep(int(w.Fd()))
	return g, nil
}

// goGuardianOnly, set by tests, makes StartGuardian start the Go guardian
// where the native one would run.
var goGuardianOnly bool

// UseGoGuardianOnly makes this process's guardian the Go one even where
// the native one runs: for tests of the fallback, before any run.
func UseGoGuardianOnly() { goGuardianOnly = true }

// startNativeGuardian starts the native guardian of dir with r at its fd 0
// and dir's cgroup.kill at its fd 1.
func startNativeGuardian(dir string, r *os.File) (int, error) {
	if goGuardianOnly {
		return 0, errors.New("the Go guardian was asked for")
	}
	if _, err := os.Stat(dir + "/cgroup.kill"); err != nil {
		return 0, fmt.Errorf("no cgroup.kill: %w", err)
	}
	prog, err := nativeGuardian()
	if err != nil {
		return 0, err
	}
	target := dir + "/cgroup.kill"
	if mutant.BindingOff {
		target = os.DevNull
	}
	kill, err := unix.Open(target, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(kill)
	return syscall.ForkExec(prog, []string{Comm, dir}, &syscall.ProcAttr{
		Dir:   "/",
		Files: []uintptr{r.Fd(), uintptr(kill)},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
}

// nativeGuardian returns the path of the native guardian's program
// (internal/guardelf), made once per process (memfdProgram).
var nativeGuardian = sync.OnceValues(func() (string, error) {
	img := guardelf.Image()
	if img == nil {
		return "", errors.New("no native guardian for this architecture")
	}
	return memfdProgram("corral-guardian", img)
})

// NativeInit returns the path of the native init's program
// (internal/initelf), made once per process (memfdProgram), or an error
// where there is none: then plain runs use the Go init too.
func NativeInit() (string, error) {
	if goInitOnly.Load() {
		return "", errors.New("the Go init was asked for")
	}
	return nativeInit()
}

var nativeInit = sync.OnceValues(func() (string, error) {
	img := initelf.Image()
	if img == nil {
		return "", errors.New("no native init for this architecture")
	}
	return memfdProgram("corral-init", img)
})

// goInitOnly, set by tests, makes NativeInit fail: plain runs use the Go
// init.
var goInitOnly atomic.Bool

// UseGoInitOnly makes this process's plain runs started from now on use
// the Go init (on) or the native one again (off): for tests of the Go
// init, which still serves sandboxed runs, enclosures, other users and
// other architectures.
func UseGoInitOnly(on bool) { goInitOnly.Store(on) }

// memfdProgram returns the path of a program made of img: a sealed
// memory file named name, kept open for the life of this process and
// executed through /proc/self/fd.
func memfdProgram(name string, img []byte) (string, error) {
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3, executable is the default
		fd, err = unix.MemfdCreate(name, flags)
	}
	if err != nil {
		return "", fmt.Errorf("memfd: %w", err)
	}
	defer unix.Close(fd)
	if n, err := unix.Write(fd, img); err != nil || n != len(img) {
		return "", fmt.Errorf("memfd: writing %s: %d of %d bytes: %v", name, n, len(img), err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return "", fmt.Errorf("memfd: sealing: %w", err)
	}
	// Above the descriptors a fork puts in place before it executes the
	// path.
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 10)
	if err != nil {
		return "", fmt.Errorf("memfd: %w", err)
	}
	Keep(high)
	return "/proc/self/fd/" + strconv.Itoa(high), nil
}

// devNull returns a descriptor of the null device, opened once per
// process and kept.
var devNull = sync.OnceValue(func() uintptr {
	fd, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return ^uintptr(0) // ForkExec closes that descriptor instead
	}
	Keep(fd)
	return uintptr(fd)
})

// kept holds the descriptors this process keeps open beyond any run: its
// guardian's pipe, the idle inits' sockets and pidfds.
var kept struct {
	sync.Mutex
	fds map[int]bool
}

// Keep records descriptors this process keeps open beyond any run.
func Keep(fds ...int) {
	kept.Lock()
	defer kept.Unlock()
	if kept.fds == nil {
		kept.fds = map[int]bool{}
	}
	for _, fd := range fds {
		kept.fds[fd] = true
	}
}

// Unkeep undoes Keep, before the descriptors are closed or handed to a run.
func Unkeep(fds ...int) {
	kept.Lock()
	defer kept.Unlock()
	for _, fd := range fds {
		delete(kept.fds, fd)
	}
}

// Kept reports whether this process keeps fd open beyond any run: tests
// leave such descriptors out of their counts.
func Kept(fd int) bool {
	kept.Lock()
	defer kept.Unlock()
	return kept.fds[fd]
}

// Pid returns the guardian's pid.
func (g *Guardian) Pid() int { return g.pid }

// Native reports whether the guardian is the native one
// (internal/guardelf) rather than a Go program.
func (g *Guardian) Native() bool { return g.native }
