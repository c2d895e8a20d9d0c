package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/shimprog"
)

// startWait bounds how long Start waits for an init to report that the
// command runs; a machine that slow fails the start rather than hang it.
const startWait = 60 * time.Second

// initFailure is an init's report that it did not start the command, and
// at which stage: "config", "prepare" (the sandbox), "confine" or "start"
// (the command itself: not found, not executable, ...).
type initFailure struct {
	stage string
	err   error
}

func (f *initFailure) Error() string { return f.err.Error() }
func (f *initFailure) Unwrap() error { return f.err }

// initAttr says how to start an init.
type initAttr struct {
	tier   corral.Containment
	why    string
	policy *sandbox.Policy // sandboxed: new namespaces, Prepare, Confine
	leaf   *cgroup.Leaf
	limits string
	box    *box
	encl   *Enclosure
	holder bool       // start an enclosure's holder, not a run's init
	early  *earlyInit // a sandbox's init, forked while its box was made
	goInit bool       // the Go init, even where the native one would do
}

// startInit starts the command of a through an init: a new one (a holder,
// for an enclosure, when ia.holder), one of the enclosure's, or an idle one
// of a plain run before; and waits for the command to run.
func startInit(a *spawnAttr, ia initAttr) (*initChild, error) {
	cfg := &shim.Config{Path: a.path, Args: a.args, Env: a.env, Dir: a.dir, Policy: ia.policy, ShareGroup: a.shareGroup,
		Ignore: ignoredSignals()}
	if ia.encl != nil {
		cfg.Policy, cfg.Confined = nil, true
	}
	// An init in another pid namespace gives pids this process cannot use:
	// it reads them from the pidfds, before the init may reap.
	cfg.Ack = ia.policy != nil || ia.encl != nil
	if cfg.Dir == "" {
		switch {
		case ia.policy != nil:
			// A sandbox's init has moved to its new root: the command
			// starts in its workspace, the directory it was asked for in.
			cfg.Dir = ia.policy.Workdir
		case ia.encl != nil:
			cfg.Dir = ia.encl.impl.box.policy.Workdir
		default:
			// An idle init started in another directory.
			cfg.Dir, _ = os.Getwd()
		}
	}
	// A plain init may serve the next plain run of its user, an
	// enclosure's init the next run in that enclosure; an init with a
	// one-shot sandbox or a cgroup leaf is the run's alone, and goes once
	// the run is over.
	pooled := poolable(a, ia)
	cfg.OneShot = !pooled && !ia.holder && ia.encl == nil
	if ia.policy != nil && !ia.holder {
		cfg.Plan = nativePlan(a, &ia)
	}
	cfgFile, err := shim.ConfigFile(cfg)
	if err != nil {
		ia.early.abandon()
		return nil, err
	}
	defer cfgFile.Close()
	files := []*os.File{a.files[0], a.files[1], a.files[2], cfgFile}
	if ia.holder {
		files = []*os.File{cfgFile}
	}
	key := credKey(a.cred)
	if ia.encl != nil {
		key = enclosureKey(ia.encl.impl)
	}
	for {
		c := &initChild{exit: make(chan struct{}), reader: make(chan struct{})}
		var err error
		if ia.early != nil {
			c, err = ia.early.take()
		}
		c.tier, c.why, c.limits, c.leaf, c.box, c.encl = ia.tier, ia.why, ia.limits, ia.leaf, ia.box, ia.encl
		if err != nil {
			c.abandonInit()
			return nil, err
		}
		reused, fresh := false, false
		if pooled {
			_, native := nativeProgram(a, ia)
			reused, fresh = c.takeIdle(key, ia.encl == nil, native)
		}
		// An init started ahead sends its own pidfd with its first run.
		c.reused = reused && !fresh
		if fresh || (reused && mutant.PrestartChurn) {
			tookWarm(key, a.cred)
		}
		if !reused && ia.early == nil {
			if pooled && (ia.encl == nil || mutant.PrestartEnclosure) {
				// Only a plain run's init is started ahead: an
				// enclosure's are its holder's, in its namespaces.
				noteCold(key, a.cred)
			}
			ctl, shimEnd, err := shim.Pair()
			if err != nil {
				c.abandonInit()
				return nil, err
			}
			c.ctl = ctl
			if ia.encl != nil {
				err = ia.encl.impl.spawn(shimEnd)
			} else {
				err = c.forkInit(a, ia, shimEnd)
			}
			shimEnd.Close()
			if err != nil {
				c.abandonInit()
				return nil, err
			}
		}
		c.poolKey, c.poolable = key, pooled
		if err := a.waitHold(); err != nil {
			c.abandonInit()
			return nil, err
		}
		m, got, err := c.startRun(files)
		if err != nil && reused && !isInitFailure(err) {
			// The idle init died while it waited: take another.
			c.abandonInit()
			continue
		}
		if err == nil {
			err = c.adopt(m, got, ia)
		}
		if err != nil {
			c.abandonInit()
			return nil, err
		}
		if cfg.Ack && !ia.holder {
			// The pids are read: the init may reap the command now.
			c.ctl.Send(shim.Msg{Op: shim.OpAck})
		}
		if !ia.holder {
			c.dropInitFD()
		}
		go c.read()
		return c, nil
	}
}

// startRun sends the run and waits for the init's first word.
func (c *initChild) startRun(files []*os.File) (shim.Msg, []*os.File, error) {
	if err := c.ctl.Send(shim.Msg{Op: shim.OpRun}, files...); err != nil {
		return shim.Msg{}, nil, fmt.Errorf("the run's init: %w", err)
	}
	return c.recvStart()
}

func isInitFailure(err error) bool {
	var f *initFailure
	return errors.As(err, &f)
}

// forkInit starts a new init (or holder) as this process's child, with
// the shim's end of its control socket.
func (c *initChild) forkInit(a *spawnAttr, ia initAttr, shimEnd *os.File) error {
	role := shim.RoleInit
	if ia.holder {
		role = shim.RoleHolder
	}
	pidfd := -1
	sys := &syscall.SysProcAttr{Setsid: !a.shareGroup, PidFD: &pidfd}
	if a.cred != nil {
		sys.Credential = &syscall.Credential{Uid: a.cred.UID, Gid: a.cred.GID, Groups: a.cred.Groups}
		if sys.Credential.Groups == nil {
			sys.Credential.Groups = []uint32{}
		}
	}
	if ia.policy != nil {
		c.pidns = true
		sandboxAttr(sys, ia.policy)
	}
	if ia.leaf != nil {
		sys.UseCgroupFD = true
		sys.CgroupFD = ia.leaf.FD()
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	files := []uintptr{null.Fd(), null.Fd(), null.Fd(), shimEnd.Fd()}
	prog, native := nativeProgram(a, ia)
	if !native {
		prog = shimprog.Direct()
	}
	if a.cred != nil {
		prog = shimprog.Path() // by a descriptor: the user may not reach its directory
	}
	if poolable(a, ia) {
		// What the init inherits now, for the pool (a change between this
		// and the fork makes a start that raced it take either).
		c.state = inheritedState()
	}
	var pid int
	// One refusal for both tries, the native and the Go: a test that
	// stops refusing while this start is under way is not met by a start
	// half refused.
	refuse := startRefused.Load()
	start := func() {
		if refuse != nil {
			if err = (*refuse)(native); err != nil {
				return
			}
		}
		pid, err = reaper.StartOwned(func() (int, error) {
			pid, err := startProcess(prog, []string{shim.Comm}, &syscall.ProcAttr{
				Env: shim.Environ(role), Files: files, Sys: sys})
			return pid, err
		})
	}
	if sys.Pdeathsig != 0 {
		c.unbind = spawnBound(start)
	} else {
		start()
		if err != nil && native && nativeRefused(err) {
			// The kernel or a policy may not execute a memory file here;
			// or the start failed for a reason of its own (placing the
			// init in its cgroup fails with the same errors). The Go
			// init tells: if it starts, this process's plain runs use
			// it from now on.
			refused := err
			if mutant.NativeOffOnAnyRefusal {
				turnNativeOff(refused)
			}
			prog, native = shimprog.Direct(), false
			start()
			if err == nil {
				turnNativeOff(refused)
			}
		}
	}
	if err != nil {
		c.unbound()
		if ia.policy != nil && ia.policy.Guard == nil {
			if uerr := initCloneFailed(err); uerr != err {
				return uerr
			}
		}
		return fmt.Errorf("starting the run's init: %w", err)
	}
	c.init, c.ownInit, c.native = pid, true, native
	if ia.leaf != nil {
		ia.leaf.ReleaseFD() // the init is in
	}
	if pidfd >= 0 {
		// Non-blocking, so that the File lives in the poller and waits on
		// it park a goroutine rather than fail at once.
		unix.SetNonblock(pidfd, true)
		c.initFD = os.NewFile(uintptr(pidfd), "pidfd")
	}
	if st, err := procfs.ReadStat(pid); err == nil {
		c.initStart = st.Start
	}
	return nil
}

// nativePlan returns the native init's plan for the sandboxed run of a,
// or nil when its init is the Go one: then an init forked early as the
// native one is abandoned, and the run's init is forked as the Go one. A
// Go init ignores a plan, so that an init that turns out to be the Go one
// after all (the native one refused to execute) serves the run as ever.
func nativePlan(a *spawnAttr, ia *initAttr) *sandbox.NativePlan {
	if _, native := nativeProgram(a, *ia); native {
		plan, err := sandbox.Native(ia.policy, goInitProgram())
		if err == nil {
			return plan
		}
		why := err.Error()
		nativePlanWhy.Store(&why)
	}
	ia.goInit = true
	if e := ia.early; e != nil {
		if c, _ := e.take(); c.native {
			e.abandon()
			ia.early = nil
		}
	}
	return nil
}

// goInitProgram is the Go init's program as a path the native init can
// open: the companion, or this program (not /proc/self/exe, which is the
// native init's own there).
var goInitProgram = sync.OnceValue(func() string {
	p := shimprog.Direct()
	if p == shimprog.Self {
		if exe, err := os.Executable(); err == nil {
			return exe
		}
	}
	return p
})

// nativeOff: the native init could not be executed here (nativeOffWhy
// says what the kernel answered); runs use the Go init from then on.
var (
	nativeOff    atomic.Bool
	nativeOffWhy atomic.Pointer[string]
)

// nativePlanWhy is why the last sandbox the native init was to build went
// to the Go init instead (sandbox.Native's error): for the tests' messages.
var nativePlanWhy atomic.Pointer[string]

// turnNativeOff makes this process's later inits the Go one: a start of
// the native init was refused with err, where the Go init's started.
func turnNativeOff(err error) {
	why := err.Error()
	nativeOffWhy.Store(&why)
	nativeOff.Store(true)
}

// startRefused, set by tests, fails the start of an init (native says
// which kind) with the error it returns, if not nil, as the kernel would.
var startRefused atomic.Pointer[func(native bool) error]

// nativeInitFor reports whether the init of a is the native one
// (internal/initelf) where this machine has it: a plain or sandboxed
// run's (the native init builds a sandbox from sandbox.Native's plan),
// started by this process as its own user. A guard's alone, an
// enclosure's (its holder's child) and another user's (found by a path
// that user can reach) are the Go init, as is any run when goInit says
// so. The Go init's own mutant (initignoresticks) is caught through plain
// runs, so it keeps them.
func nativeInitFor(a *spawnAttr, ia initAttr) bool {
	if ia.holder || ia.encl != nil || a.cred != nil || ia.goInit || nativeOff.Load() || mutant.InitIgnoreSticks {
		return false
	}
	if p := ia.policy; p != nil {
		// A sandbox the native init builds itself (sandbox.Native): any
		// but a guard's alone.
		return p.Guard == nil && !mutant.NativeSandboxOff
	}
	return true
}

// nativeProgram returns the native init's program, and true, when an
// init started now for a is the native one.
func nativeProgram(a *spawnAttr, ia initAttr) (string, bool) {
	if !nativeInitFor(a, ia) {
		return "", false
	}
	p, err := shim.NativeInit()
	return p, err == nil
}

// nativeRefused reports whether err is the exec of the native init's
// memory file refused (a kernel or policy without executable memory
// files), not a failure any init would meet.
func nativeRefused(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOEXEC)
}

// poolable reports whether an init started for a (or ahead, with no run)
// may serve another run: a plain one, with no one-shot sandbox, no cgroup
// leaf of its own and not in the supervisor's process group.
func poolable(a *spawnAttr, ia initAttr) bool {
	return ia.policy == nil && !ia.holder && ia.leaf == nil && !a.shareGroup
}

// sandboxAttr sets the namespaces of a sandbox's init: new user, mount,
// pid, IPC and UTS namespaces, and network unless the run keeps the
// host's; the user and group mapped to themselves (root: every id, so that
// files keep their owners); the capabilities the init needs to build the
// sandbox kept across its exec when it is not root; and death with this
// process.
func sandboxAttr(sys *syscall.SysProcAttr, p *sandbox.Policy) {
	if p.Guard != nil {
		guardAttr(sys)
		return
	}
	sys.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
	if p.Network == corral.NetworkNone {
		sys.Cloneflags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1 << 31}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1 << 31}}
	} else {
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	if uid != 0 || (sys.Credential != nil && sys.Credential.Uid != 0) {
		sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SYS_PTRACE, unix.CAP_SETPCAP}
	}
	if !mutant.BindingOff {
		sys.Pdeathsig = syscall.SIGKILL
	}
}

// recvStart waits for the init's first word: the command runs, or why not.
func (c *initChild) recvStart() (shim.Msg, []*os.File, error) {
	// The wait is bounded by the socket's deadline (the poller's timer),
	// not a goroutine and a timer of its own per run.
	if err := c.ctl.SetReadDeadline(time.Now().Add(startWait)); err != nil {
		return shim.Msg{}, nil, fmt.Errorf("the run's init: %w", err)
	}
	defer c.ctl.SetReadDeadline(time.Time{})
	for {
		m, files, err := c.ctl.Recv()
		switch {
		case err == nil && m.Op == shim.OpIdle:
			continue // an idle init's answer to its last run
		case errors.Is(err, os.ErrDeadlineExceeded):
			c.ctl.Close()
			return shim.Msg{}, nil, fmt.Errorf("the run's init did not start the command within %v", startWait)
		case errors.Is(err, io.EOF):
			return m, nil, errors.New("the run's init exited before starting the command")
		case err != nil:
			return m, nil, fmt.Errorf("the run's init: %w", err)
		case m.Op == shim.OpFailed:
			shimCloseAll(files)
			return m, nil, &initFailure{stage: m.Stage, err: m.Error()}
		}
		return m, files, nil
	}
}

// adopt takes the command's and the init's pidfds from a Started message.
func (c *initChild) adopt(m shim.Msg, files []*os.File, ia initAttr) error {
	// The command's pidfd, and the init's own with its first run (an
	// idle init's is kept from then).
	want := 2
	switch {
	case ia.holder:
		want = 0
	case c.reused:
		want = 1
	}
	if (m.Op != shim.OpStarted && m.Op != shim.OpReady) || len(files) < want {
		shimCloseAll(files)
		return fmt.Errorf("the run's init answered %q", m.Op)
	}
	c.mechs, c.abi = m.Mechanisms, m.LandlockABI
	rest := files
	if !ia.holder {
		c.pidfd, rest = files[0], files[1:]
		if !c.reused {
			if c.initFD == nil {
				c.initFD = rest[0]
			} else {
				rest[0].Close()
			}
			rest = rest[1:]
		}
		if ia.policy == nil && ia.encl == nil {
			// The init shares this process's pid namespace: its pids are
			// ours.
			c.pid, c.start = m.Pid, m.Start
		} else {
			pid, err := shim.PidfdPid(c.pidfd)
			if err != nil || pid <= 0 {
				shimCloseAll(rest)
				return fmt.Errorf("the command's pid: %v", err)
			}
			c.pid = pid
			if st, err := procfs.ReadStat(pid); err == nil {
				c.start = st.Start
			}
		}
		if c.init == 0 {
			c.init, _ = shim.PidfdPid(c.initFD)
			if st, err := procfs.ReadStat(c.init); err == nil {
				c.initStart = st.Start
			}
		}
	}
	if len(rest) > 0 {
		if c.box != nil {
			files := rest
			rest = nil
			if err := c.box.serve(files); err != nil {
				return err
			}
		}
		shimCloseAll(rest)
	}
	switch {
	case ia.tier == corral.ContainmentProcessGroup && ia.policy == nil && ia.encl == nil:
		// The group, among what the init holds.
		c.tree = &initTree{root: c.init, pgid: c.pid}
	default:
		c.tree = &initTree{root: c.init}
	}
	switch {
	case c.pidns || ia.encl != nil:
		c.bound = BindingPidNamespace
	default:
		c.bound = BindingInit
	}
	return nil
}
