package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/sandbox"
)

// initState is what an init or holder knows while it runs.
type initState struct {
	cfg   Config
	ctl   *Conn
	msgs  <-chan incoming // corral's messages, for the init's whole life
	chld  chan os.Signal
	role  string
	pid1  bool // pid 1 of a pid namespace: the kernel kills the rest when it exits
	ports []*os.File
	mech  []string
	// sentSelf: corral has the init's own pidfd (sent with the first run).
	sentSelf bool
}

// deaf catches the signals an init drops (see runInit).
var deaf = make(chan os.Signal, 8)

// deafSignals are the signals an init catches to drop them: those that
// would end it (TERM, INT, HUP; QUIT, with a stack dump; PIPE, which the
// Go runtime turns into an exit when a write to the init's stdout or
// stderr fails) and those that would stop it (TTIN, TTOU: an init in
// corral's process group gets the group's). runInit drops the last two
// from the list for pid 1 of a pid namespace, which no terminal's group
// holds and whose own namespace's signals without a handler the kernel
// drops. The Go runtime drops USR1, USR2 and ALRM itself when they are not
// caught. Each signal caught through os/signal is a round trip with the
// runtime's signal thread, up to 0.1 ms in a process this young, before a
// sandbox's init can read its run: the first five (endSignals), which the
// runtime handles from its start, are ignored in the kernel instead where
// it can (ignoreInKernel), and a fork sets them back to the default for
// the command; TTIN and TTOU, which the runtime leaves alone until asked,
// are caught.
var deafSignals = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE, unix.SIGTTIN, unix.SIGTTOU}

// endSignals are the signals of deafSignals that would end the init, the
// runtime's to handle from its start.
var endSignals = []syscall.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE}

// ignoreForCommand makes the command about to be forked inherit the
// signals corral ignores (Config.Ignore), as a child of corral itself
// would: ignored here until the fork, then handled again, so that an idle
// init's next run starts as the first did.
func ignoreForCommand(sigs []int) (restore func()) {
	if len(sigs) == 0 {
		return func() {}
	}
	list := make([]os.Signal, len(sigs))
	var others []os.Signal
	for i, s := range sigs {
		list[i] = syscall.Signal(s)
		if !slices.Contains(deafSignals, list[i]) {
			others = append(others, list[i])
		}
	}
	signal.Ignore(list...)
	return func() {
		// Reset alone would leave them ignored (it does not undo Ignore),
		// and the next command would start with them ignored though
		// corral no longer ignores them. Caught again, each is the
		// runtime's to handle, which a fork sets back to the default in
		// the child; those an init does not drop then go back to the
		// runtime's own handling.
		if mutant.InitIgnoreSticks {
			signal.Reset(list...)
			signal.Notify(deaf, deafSignals...)
			return
		}
		signal.Notify(deaf, list...)
		if len(others) > 0 { // Reset of none resets every signal
			signal.Reset(others...)
		}
	}
}

func runInit() int {
	// Only corral ends an init: through its control socket, or SIGKILL. A
	// command that signals it (under network host no Landlock scope keeps
	// it from trying) gets nowhere. The signals are caught and dropped, not
	// ignored: an ignored signal stays ignored across exec, and the command
	// must get SIGTERM as it would anywhere else. An init in corral's
	// process group (Config.ShareGroup) gets the group's SIGTTIN and
	// SIGTTOU when the command uses the terminal from the background, and
	// must not stop for them: it reaps.
	st := &initState{role: os.Getenv(RoleEnv), pid1: os.Getpid() == 1}
	if st.pid1 {
		deafSignals = deafSignals[:len(deafSignals)-2]
	}
	if !mutant.InitDeafOff {
		caught := deafSignals
		if mutant.InitIgnoreInherited {
			for _, s := range endSignals {
				signal.Ignore(s)
			}
			caught = deafSignals[len(endSignals):]
		} else if ignoreInKernel(endSignals...) {
			caught = deafSignals[len(endSignals):]
		}
		if len(caught) > 0 {
			signal.Notify(deaf, caught...)
		}
	}
	go func() {
		for range deaf {
		}
	}()
	// Neither may a process of the same user read the init's memory or
	// take its descriptors (the control socket) through /proc.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	unix.CloseOnExec(ControlFD)
	ctl, err := NewConn(os.NewFile(ControlFD, "shim-control"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral shim:", err)
		return ExitShimFailed
	}
	st.ctl = ctl
	st.chld = make(chan os.Signal, 1)
	signal.Notify(st.chld, unix.SIGCHLD)
	st.msgs = st.receive()
	if r, ok := os.LookupEnv(ResumeEnv); ok {
		return st.resume(r)
	}
	for first := true; ; first = false {
		// Between runs an init waits for the next: corral keeps inits
		// whose tree is gone for its next plain run.
		in, ok := <-st.msgs
		if !ok || in.m.Op == OpExit {
			closeAll(in.files)
			return 0
		}
		stdio, err := st.takeRun(in)
		if err != nil {
			return st.fail("config", err)
		}
		if first {
			if code, ok := st.setUp(); !ok {
				closeAll(stdio)
				return code
			}
			if st.role == RoleHolder {
				return st.hold()
			}
		}
		if !st.runCommand(stdio) {
			return 0
		}
	}
}

// takeRun reads a Run message: its last descriptor is the configuration,
// the three before it (none for a holder) the command's stdin, stdout and
// stderr, which the caller owns.
func (st *initState) takeRun(in incoming) ([]*os.File, error) {
	want := 4
	if st.role == RoleHolder {
		want = 1
	}
	if in.m.Op != OpRun || len(in.files) != want {
		closeAll(in.files)
		return nil, fmt.Errorf("want a %q message with %d descriptors, got %q with %d", OpRun, want, in.m.Op, len(in.files))
	}
	cfg := in.files[want-1]
	defer cfg.Close()
	b, err := readConfig(cfg)
	if err == nil {
		err = st.cfg.unmarshal(b)
	}
	if err != nil {
		closeAll(in.files[:want-1])
		return nil, err
	}
	return in.files[:want-1], nil
}

// readConfig reads a run's configuration: in one read, its size known
// (corral wrote it whole before sending it), up to 64 MiB.
func readConfig(f *os.File) ([]byte, error) {
	const most = 64 << 20
	fi, err := f.Stat()
	if err != nil || fi.Size() <= 0 || fi.Size() > most {
		return io.ReadAll(io.LimitReader(f, most))
	}
	b := make([]byte, fi.Size())
	n, err := io.ReadFull(f, b)
	return b[:n], err
}

// setUp builds the sandbox, when the first run has one, and makes a plain
// init a subreaper. It reports false, with the exit status, on failure.
func (st *initState) setUp() (int, bool) {
	var err error
	if p := st.cfg.Policy; p != nil && !st.cfg.Confined {
		if st.ports, st.mech, err = sandbox.Prepare(p); err != nil {
			return st.fail("prepare", err), false
		}
	}
	if !st.pid1 {
		// Every orphan of the tree comes here, so that the tree is exactly
		// this process's descendants.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return st.fail("config", fmt.Errorf("subreaper: %w", err)), false
		}
	}
	return 0, true
}

// fail tells corral why nothing runs, and returns the exit status.
func (st *initState) fail(stage string, err error) int {
	m := Msg{Op: OpFailed, Stage: stage, Err: err.Error()}
	var errno unix.Errno
	if errors.As(err, &errno) {
		m.Errno = int(errno)
	}
	if st.ctl.Send(m) != nil {
		fmt.Fprintf(os.Stderr, "corral shim: %s: %v\n", stage, err)
	}
	return ExitShimFailed
}

// forked is a command started from a thread of its own.
type forked struct {
	pid    int
	notify int // the gate's seccomp notification descriptor, or -1
	mech   []string
	abi    int
	stage  string // what failed: "confine" or "start"
	err    error

	sent int // what reportStart did, once it started
}

// confinedThread runs fn on a new OS thread, confined for the sandbox
// first when there is one (fn does not run when that fails), and ends the
// thread when fn returns.
func (st *initState) confinedThread(fn func(f *forked)) forked {
	done := make(chan forked, 1)
	go func() {
		// Locked and never unlocked: when this goroutine returns, the
		// runtime ends the thread, confinement and all.
		runtime.LockOSThread()
		f := forked{notify: -1}
		if p := st.cfg.Policy; p != nil && !st.cfg.Confined {
			f.notify, f.mech, f.abi, f.err = sandbox.Confine(p)
			if f.err != nil {
				f.stage = "confine"
				done <- f
				return
			}
		}
		fn(&f)
		if f.err != nil {
			f.stage = "start"
		}
		if f.err != nil && f.notify >= 0 {
			unix.Close(f.notify)
			f.notify = -1
		}
		done <- f
	}()
	return <-done
}

// runCommand runs one command with stdio as its stdin, stdout and stderr
// (closed here once it runs), serves it, and reports whether this init
// stays for another run.
func (st *initState) runCommand(stdio []*os.File) (stay bool) {
	defer closeAll(stdio)
	if d := st.cfg.Dir; d != "" {
		// A directory missing here would read as the program missing.
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			where := ""
			if st.cfg.Policy != nil || st.cfg.Confined {
				where = " inside the sandbox (is it under a path the sandbox hides, such as /tmp?)"
			}
			st.fail("start", fmt.Errorf("working directory %s is not a directory%s", d, where))
			return false
		}
	}
	fork := func(f *forked) {
		// Plain clone (no pidfd, no cgroup): the sandbox's filter refuses
		// clone3, and a pidfd is opened below instead.
		f.pid, f.err = syscall.ForkExec(st.cfg.Path, st.cfg.Args, &syscall.ProcAttr{
			Dir:   st.cfg.Dir,
			Env:   st.cfg.Env,
			Files: []uintptr{stdio[0].Fd(), stdio[1].Fd(), stdio[2].Fd()},
			Sys:   &syscall.SysProcAttr{Setsid: !st.cfg.ShareGroup},
		})
		if f.err != nil {
			f.stage = "start"
			return
		}
		// Reported from the thread that forked: a confined thread that
		// ended first would hand its processor back to another thread, a
		// wake-up before the report while the command starts on the
		// other CPU.
		f.sent = st.reportStart(f, stdio)
	}
	var c forked
	restore := ignoreForCommand(st.cfg.Ignore)
	defer restore()
	if st.cfg.Policy != nil && !st.cfg.Confined {
		c = st.confinedThread(fork)
	} else {
		// Nothing to confine: any thread forks.
		c.notify = -1
		fork(&c)
	}
	if c.err != nil {
		st.fail(c.stage, c.err)
		return false
	}
	switch c.sent {
	case startFailed:
		return false
	case corralGone:
		// Corral is gone already: nothing may outlive it.
		st.killTree()
		return false
	}
	stopGate := st.gate(c.notify, nil)
	defer stopGate()
	return st.serve(c.pid, false, !st.cfg.Ack)
}

// resume takes a sandbox's run over from the native init, which executed
// this program in its own process (pid 1 of the sandbox) when a command
// first connected a Unix socket: spec says what it hands over (see
// ResumeEnv). The gate is served from here on, and the run as runCommand
// serves it.
func (st *initState) resume(spec string) int {
	os.Unsetenv(ResumeEnv)
	var cmd, detached, acked, notify, cfgFD int
	var pending *sandbox.Pending
	var p sandbox.Pending
	n, err := fmt.Sscan(spec, &cmd, &detached, &acked, &notify, &cfgFD, &p.ID, &p.Pid, &p.Nr, &p.Args[0], &p.Args[1], &p.Args[2])
	switch {
	case n == 11:
		pending = &p
	case n != 5 || err != io.EOF:
		return st.fail("config", fmt.Errorf("%s %q: %w", ResumeEnv, spec, err))
	}
	unix.CloseOnExec(notify)
	f := os.NewFile(uintptr(cfgFD), "shim-config")
	b, err := readConfig(f)
	f.Close()
	if err == nil {
		err = st.cfg.unmarshal(b)
	}
	if err != nil {
		unix.Close(notify)
		return st.fail("config", err)
	}
	st.sentSelf = true
	stopGate := st.gate(notify, pending)
	defer stopGate()
	st.serve(cmd, detached == 1, acked == 1 && !mutant.ResumeUnacked)
	return 0
}

// What reportStart did.
const (
	startReported = iota
	startFailed   // the command is killed, corral told why
	corralGone    // the report could not be sent
)

// reportStart tells corral that command c runs: it closes the command's
// stdio here (holding them open would keep its pipes from reading end of
// file when it and its tree are done), and sends the command's pidfd, the
// init's own with its first run, and the sandbox's listeners.
func (st *initState) reportStart(c *forked, stdio []*os.File) int {
	closeAll(stdio)
	// The command is this process's child and not reaped yet: its pid
	// cannot have been recycled.
	// Non-blocking pidfds: corral waits on them in its poller.
	cmdFD, err := unix.PidfdOpen(c.pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		unix.Kill(c.pid, unix.SIGKILL)
		st.fail("start", fmt.Errorf("pidfd of the command: %w", err))
		return startFailed
	}
	// The init's own pidfd goes with its first run only: corral keeps it
	// for the init's life.
	fds := []int{cmdFD}
	if !st.sentSelf {
		selfFD, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_NONBLOCK)
		if err != nil {
			unix.Close(cmdFD)
			unix.Kill(c.pid, unix.SIGKILL)
			st.fail("start", fmt.Errorf("pidfd of the init: %w", err))
			return startFailed
		}
		fds = append(fds, selfFD)
	}
	for _, f := range st.ports {
		fds = append(fds, int(f.Fd()))
	}
	var start uint64
	if s, err := procfs.ReadStat(c.pid); err == nil {
		start = s.Start
	}
	err = st.ctl.SendFDs(Msg{Op: OpStarted, Pid: c.pid, Start: start, Mechanisms: append(st.mech, c.mech...), LandlockABI: c.abi}, fds...)
	st.sentSelf = true
	for _, fd := range fds[:len(fds)-len(st.ports)] {
		unix.Close(fd)
	}
	closeAll(st.ports)
	st.ports, st.mech = nil, nil
	if err != nil {
		return corralGone
	}
	return startReported
}

// gate answers the sandbox's Unix-socket gate until the returned func is
// called.
func (st *initState) gate(notify int, pending *sandbox.Pending) func() {
	if notify < 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := sandbox.Gate(ctx, notify, st.cfg.Policy, pending); err != nil {
			fmt.Fprintln(os.Stderr, "corral shim: gate:", err)
		}
	}()
	return func() { cancel(); <-done }
}

// serve reaps the tree and reports the command's end, until corral says
// exit (or goes away), or that the run is over and this init may serve
// another (stay). detached and acked are what corral said already; cmd is
// 0 when its end was reported already.
func (st *initState) serve(cmd int, detached, acked bool) (stay bool) {
	// Corral in another pid namespace reads the command's pid from its
	// pidfd, which says nothing once the command is reaped: reap nothing
	// before its first word then (acked false).
	msgs := st.msgs
	for {
		if acked && st.reap(cmd) && (detached || st.cfg.OneShot && !mutant.OneShotWaits) {
			// Nothing left to hold; or the command's end is reported,
			// nothing of its tree is left and no run follows: the init
			// goes, its namespaces with it.
			return false
		}
		select {
		case <-st.chld:
		case in, ok := <-msgs:
			closeAll(in.files)
			m := in.m
			acked = true
			switch {
			case !ok:
				msgs = nil
				if detached {
					continue
				}
				// Corral is gone (or gave up on the run): nothing of the
				// tree may outlive it.
				if mutant.BindingOff {
					time.Sleep(time.Minute)
				}
				st.killTree()
				return false
			case m.Op == OpExit:
				// The tree should be gone; make sure, and leave no zombie
				// behind to be handed to corral. Then go at once: corral
				// waits for this exit, and the kernel releases the rest
				// (the gate's notification descriptor included).
				st.killTree()
				os.Exit(0)
			case m.Op == OpIdle:
				// The run is over: nothing of it may stay, and this init
				// waits for the next.
				return st.ctl.Send(Msg{Op: OpIdle, Killed: st.killTree()}) == nil
			case m.Op == OpDetach:
				detached = true
				// What is left is meant to live on: no longer die with
				// corral. The signal is the main thread's, the one
				// corral's clone gave it to.
				clear := func() { unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0) }
				if mutant.DeathSignalAnyThread {
					clear()
				} else {
					onMainThread(clear)
				}
			}
		}
	}
}

// incoming is a message from corral with the descriptors it carried.
type incoming struct {
	m     Msg
	files []*os.File
}

// receive delivers corral's messages, for the init's whole life, until
// corral's end closes.
func (st *initState) receive() <-chan incoming {
	ch := make(chan incoming)
	go func() {
		defer close(ch)
		for {
			m, files, err := st.ctl.Recv()
			if err != nil {
				return
			}
			ch <- incoming{m, files}
		}
	}()
	return ch
}

// reap collects every exited child, reports the command's status when it
// is among them, and says whether no child is left at all.
func (st *initState) reap(cmd int) (empty bool) {
	var exited *Msg
	// The command's end is reported once the children are reaped, saying
	// whether it left anything: with no child left, no process of the tree
	// is (orphans come here), and none can appear any more.
	defer func() {
		if exited != nil {
			exited.Alone = empty
			st.ctl.Send(*exited)
		}
	}()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ECHILD) {
			return true
		}
		if err != nil || pid <= 0 {
			return false
		}
		if pid == cmd {
			exited = &Msg{Op: OpExited}
			if ws.Signaled() {
				exited.Signal = int(ws.Signal())
			} else {
				exited.Code = ws.ExitStatus()
			}
		}
	}
}

// killTree ends every descendant of this process: in a pid namespace of
// its own the kernel does it when the init exits; otherwise the tree is
// frozen with SIGSTOP until no new process appears (so that none can fork
// while it is killed), then killed, then reaped. It returns how many it
// killed (none in a pid namespace of its own).
func (st *initState) killTree() (killed int) {
	if st.pid1 {
		return 0
	}
	// No child at all, the usual case: then no process of the tree is
	// left, since every orphan of it comes here. One wait says so (a walk
	// of every thread's children took seven opens, reads and closes, on
	// the next run's path).
	if _, err := unix.Wait4(-1, nil, unix.WNOHANG, nil); errors.Is(err, unix.ECHILD) {
		return 0
	}
	killed = len(KillDescendants(os.Getpid()))
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.ECHILD) {
			return killed
		}
		if pid <= 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return killed
}

// KillDescendants freezes every live descendant of pid with SIGSTOP, round
// after round until a walk finds none it has not stopped, then sends them
// all SIGKILL (through pidfds, checked against their start times). It
// returns the processes it killed. pid must be a subreaper (or the init of
// a pid namespace), so that no descendant can leave its subtree.
func KillDescendants(pid int) []procfs.Stat {
	return procfs.FreezeKill(func() []procfs.Stat { return procfs.Descendants(pid) })
}

// hold is the holder of an enclosure: it confines one thread for the
// enclosure's life and, on corral's request, forks from it one init per
// run, inside the sandbox's one Landlock domain.
func (st *initState) hold() int {
	type spawn struct {
		fds []*os.File
		err chan error
	}
	reqs := make(chan spawn)
	ready := make(chan forked, 1)
	go func() {
		// Locked for good: the thread is confined, and forks every run.
		runtime.LockOSThread()
		f := forked{notify: -1}
		if p := st.cfg.Policy; p != nil {
			f.notify, f.mech, f.abi, f.err = sandbox.Confine(p)
		}
		ready <- f
		if f.err != nil {
			return
		}
		for r := range reqs {
			// The run's init gets the holder's stdio (the null device) and
			// the run's control socket; corral sends it the run.
			_, err := syscall.ForkExec("/proc/self/exe", []string{"corral-shim"}, &syscall.ProcAttr{
				Env:   Environ(RoleInit),
				Files: []uintptr{0, 1, 2, r.fds[0].Fd()},
				Sys:   &syscall.SysProcAttr{Setsid: true},
			})
			r.err <- err
		}
	}()
	c := <-ready
	if c.err != nil {
		return st.fail("confine", c.err)
	}
	defer close(reqs)
	files := st.ports
	err := st.ctl.Send(Msg{Op: OpReady, Mechanisms: append(st.mech, c.mech...), LandlockABI: c.abi}, files...)
	closeAll(files)
	st.ports = nil
	if err != nil {
		return 0 // corral is gone; the kernel takes the namespace with us
	}
	stopGate := st.gate(c.notify, nil)
	defer stopGate()
	for {
		select {
		case <-st.chld:
			st.reap(0) // the runs' inits, when they are done
		case in, ok := <-st.msgs:
			if !ok {
				// Corral is gone or closed the enclosure: as pid 1, this
				// process takes every process of the sandbox with it.
				if mutant.BindingOff {
					time.Sleep(time.Minute)
				}
				return 0
			}
			if in.m.Op != OpSpawn || len(in.files) != 1 {
				closeAll(in.files)
				continue
			}
			r := spawn{fds: in.files, err: make(chan error, 1)}
			reqs <- r
			if err := <-r.err; err != nil {
				// Tell the run, whose end corral is waiting on.
				if run, cerr := NewConn(in.files[0]); cerr == nil {
					run.Send(Msg{Op: OpFailed, Stage: "start", Err: "starting the run's init: " + err.Error()})
					run.Close()
					in.files[0] = nil
				}
			}
			closeAll(in.files)
		}
	}
}
