//go:build linux

package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/sandbox"
)

// Main runs the init and exits when this process was started as one by
// Start; otherwise it returns at once.
func Main() {
	if os.Getenv(initEnv) != "1" {
		return
	}
	os.Exit(runInit())
}

// The init's main goroutine keeps the main thread, so that Confine never
// runs there (see sandbox.Confine).
func init() {
	if os.Getenv(initEnv) == "1" {
		runtime.LockOSThread()
	}
}

// controlFD is where Start puts the init's end of the control socket.
const controlFD = 3

func runInit() int {
	start := Monotonic()
	unix.CloseOnExec(controlFD)
	buf := make([]byte, 1<<20)
	n, err := unix.Read(controlFD, buf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxtest init: read config:", err)
		return 125
	}
	var cfg Config
	if err := json.Unmarshal(buf[:n], &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxtest init: config:", err)
		return 125
	}
	st := Status{InitStart: start}
	fail := func(err error) int {
		st.Error = err.Error()
		report(st, nil)
		fmt.Fprintln(os.Stderr, "sandboxtest init:", err)
		return 125
	}
	listeners, mech, err := sandbox.Prepare(cfg.Policy)
	if err != nil {
		return fail(err)
	}
	st.Prepared = Monotonic()
	path, err := lookPath(cfg.Args[0], cfg.Env)
	if err != nil {
		return fail(err)
	}
	c := confineAndFork(cfg, path)
	if c.err != nil {
		return fail(c.err)
	}
	st.Mechanisms, st.LandlockABI = append(mech, c.mechanisms...), c.abi
	st.Confined, st.Execed = c.confined, c.execed
	report(st, listeners)
	for _, l := range listeners {
		l.Close()
	}

	// Gate must leave nothing behind: count goroutines and descriptors
	// before it (with the poller Gate uses already set up) and after.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	goroutines, fds := runtime.NumGoroutine(), countFDs()
	ctx, cancel := context.WithCancel(context.Background())
	gated := make(chan error, 1)
	go func() { gated <- sandbox.Gate(ctx, c.notifyFD, cfg.Policy, nil) }()
	code := reap(c.pid)
	cancel()
	if err := <-gated; err != nil {
		fmt.Fprintln(os.Stderr, "sandboxtest init:", err)
		return 125
	}
	if c.notifyFD >= 0 {
		fds-- // Gate owned it
	}
	// The goroutine that ran Gate may still be on its way out.
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if g, f := runtime.NumGoroutine(), countFDs(); g > goroutines || f != fds {
		buf := make([]byte, 1<<16)
		fmt.Fprintf(os.Stderr, "sandboxtest init: Gate left %d goroutines (had %d) and %d descriptors (had %d)\n%s\n", g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
		return 125
	}
	return code
}

func countFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries) - 1 // the directory's own descriptor
}

type forked struct {
	pid, notifyFD    int
	mechanisms       []string
	abi              int
	confined, execed int64
	err              error
}

// confineAndFork confines a thread of its own and forks the command from
// it; the thread ends with its goroutine, still locked, so that no other
// goroutine ever runs on it.
func confineAndFork(cfg Config, path string) forked {
	done := make(chan forked, 1)
	go func() {
		runtime.LockOSThread()
		var f forked
		f.notifyFD, f.mechanisms, f.abi, f.err = sandbox.Confine(cfg.Policy)
		f.confined = Monotonic()
		if f.err == nil {
			f.pid, f.err = syscall.ForkExec(path, cfg.Args, &syscall.ProcAttr{
				Dir:   cfg.Dir,
				Env:   cfg.Env,
				Files: []uintptr{0, 1, 2},
				Sys:   &syscall.SysProcAttr{Setsid: true},
			})
			if f.err != nil {
				f.err = fmt.Errorf("start %s in %s: %w", path, cfg.Dir, f.err)
			}
			f.execed = Monotonic()
			if f.err != nil && f.notifyFD >= 0 {
				unix.Close(f.notifyFD)
			}
		}
		done <- f
	}()
	return <-done
}

// lookPath finds name in the PATH of env, as seen inside the sandbox.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				path := filepath.Join(dir, name)
				if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return path, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s: not found in the command's PATH", name)
}

// report sends the status, and the sandbox's listeners, to Start.
func report(st Status, listeners []*os.File) {
	b, _ := json.Marshal(st)
	var oob []byte
	if len(listeners) > 0 {
		fds := make([]int, len(listeners))
		for i, l := range listeners {
			fds[i] = int(l.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	unix.Sendmsg(controlFD, b, oob, nil, 0)
}

// reap waits for the command, reaping the orphans of the pid namespace
// meanwhile, and returns its exit code. When the init returns, the kernel
// kills whatever is left in the namespace.
func reap(pid int) int {
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 125
		}
		if wpid != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
