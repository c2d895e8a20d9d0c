package shim

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/mutant"
)

// Guardian environment: the corral-owned cgroup directory and the prefix
// of the leaves of the corral process it guards.
const (
	guardianDirEnv    = "CORRAL_SHIM_CGROUP_DIR"
	guardianPrefixEnv = "CORRAL_SHIM_LEAF_PREFIX"
)

// runGuardian waits for corral to go, then kills its leaves.
func runGuardian() int {
	dir, prefix := os.Getenv(guardianDirEnv), os.Getenv(guardianPrefixEnv)
	if dir == "" || prefix == "" || strings.ContainsRune(prefix, '/') {
		fmt.Fprintln(os.Stderr, "corral shim: guardian without its cgroup directory and leaf prefix")
		return ExitShimFailed
	}
	// Only the end of corral's pipe ends the guardian (or SIGKILL).
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE)
	detached := map[string]bool{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "detach "); ok {
			detached[name] = true
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || mutant.BindingOff {
		return 0
	}
	var wg sync.WaitGroup
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) || detached[e.Name()] {
			continue
		}
		wg.Add(1)
		go func(path string) {
			defer wg.Done()
			leaf, err := cgroup.Open(path)
			if err != nil {
				return
			}
			leaf.Kill()
			leaf.WaitEmpty(time.Now().Add(2 * time.Second))
			leaf.Close()
		}(filepath.Join(dir, e.Name()))
	}
	wg.Wait()
	return 0
}

// Guardian is the guardian of this process's cgroup leaves, once started.
type Guardian struct {
	mu  sync.Mutex
	w   *os.File
	pid int
}

// StartGuardian starts the guardian of the leaves named prefix* in dir,
// from program (this program or its companion, see internal/shimprog). It
// lives as long as this process (in a session of its own, so that a
// terminal's signals do not reach it) and acts when this process is gone.
func StartGuardian(program, dir, prefix string) (*Guardian, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("guardian: %w", err)
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("guardian: %w", err)
	}
	defer null.Close()
	pid, err := syscall.ForkExec(program, []string{Comm}, &syscall.ProcAttr{
		Env: Environ(RoleGuardian,
			guardianDirEnv+"="+dir,
			guardianPrefixEnv+"="+prefix,
		),
		Files: []uintptr{r.Fd(), null.Fd(), os.Stderr.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("guardian: starting it: %w", err)
	}
	Keep(int(w.Fd()))
	return &Guardian{w: w, pid: pid}, nil
}

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

// Detach tells the guardian to leave the leaf name alone: its processes
// were left running on purpose.
func (g *Guardian) Detach(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(g.w, "detach %s\n", name)
}
