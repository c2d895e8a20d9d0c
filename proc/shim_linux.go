package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/shim"
)

// startWait bounds how long Start waits for an init to report that the
// command runs; a machine that slow fails the start rather than hang it.
const startWait = 60 * time.Second

// spawner forks the shims whose PR_SET_PDEATHSIG must fire only when this
// process dies. The kernel sends it when the thread that forked the child
// exits, and a Go program ends a thread whenever a goroutine returns while
// locked to it; so they are forked from one locked thread that lives for
// as long as any of them does, and ends with the last.
var spawner struct {
	mu   sync.Mutex
	n    int // such children alive, or being started
	reqs chan func()
}

// spawnBound runs fn on the spawner's thread and returns the func to call
// once the child fn started is gone (reaped), or was never started.
func spawnBound(fn func()) (release func()) {
	spawner.mu.Lock()
	spawner.n++
	if spawner.reqs == nil {
		reqs := make(chan func())
		spawner.reqs = reqs
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			for f := range reqs {
				f()
			}
		}()
	}
	reqs := spawner.reqs
	spawner.mu.Unlock()
	done := make(chan struct{})
	reqs <- func() { fn(); close(done) }
	<-done
	var once sync.Once
	return func() {
		once.Do(func() {
			spawner.mu.Lock()
			defer spawner.mu.Unlock()
			if spawner.n--; spawner.n == 0 {
				close(spawner.reqs)
				spawner.reqs = nil
			}
		})
	}
}

// initChild is a run whose tree an init holds (see internal/shim): every
// sandboxed run, and plain runs of the subreaper and process-group tiers.
type initChild struct {
	tier   corral.Containment
	why    string
	limits string
	bound  string

	ctl       *shim.Conn
	init      int      // the init's pid, in this pid namespace
	initStart uint64   // its start time
	initFD    *os.File // pidfd of the init
	ownInit   bool     // the init is this process's child, to reap
	pidns     bool     // the init is pid 1 of a pid namespace

	pid   int      // the command
	start uint64   // its start time
	pidfd *os.File // its pidfd

	tree   tree         // the command's tree, below the init
	leaf   *cgroup.Leaf // cgroup tier: the leaf the init was born in
	box    *box         // a one-shot sandbox: released with the run
	encl   *Enclosure   // the enclosure the run is in
	mechs  []string
	abi    int
	report *corral.SandboxReport // set by finish

	unbind   func()        // when the init is reaped: it was forked by the spawner
	poolKey  string        // the user it runs as, for the pool of idle inits
	poolable bool          // a plain init, which may serve another run
	exit     chan struct{} // closed when the command has exited
	status   exitStatus    // set before exit is closed
	reader   chan struct{} // closed when the control reader is done
	stopOnce sync.Once
}

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
	tier    corral.Containment
	why     string
	policy  *sandbox.Policy // sandboxed: new namespaces, Prepare, Confine
	leaf    *cgroup.Leaf
	limits  string
	box     *box
	encl    *Enclosure
	holder  bool // start an enclosure's holder, not a run's init
	nostdio bool
}

// startInit starts the command of a through an init: a new one (a holder,
// for an enclosure, when ia.holder), one of the enclosure's, or an idle one
// of a plain run before; and waits for the command to run.
func startInit(a *spawnAttr, ia initAttr) (*initChild, error) {
	cfg := &shim.Config{Path: a.path, Args: a.args, Env: a.env, Dir: a.dir, Policy: ia.policy}
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
	cfgFile, err := shim.ConfigFile(cfg)
	if err != nil {
		return nil, err
	}
	defer cfgFile.Close()
	files := []*os.File{a.files[0], a.files[1], a.files[2], cfgFile}
	if ia.holder {
		files = []*os.File{cfgFile}
	}
	pooled := ia.policy == nil && ia.encl == nil && !ia.holder && ia.leaf == nil
	key := credKey(a.cred)
	for {
		c := &initChild{tier: ia.tier, why: ia.why, limits: ia.limits, leaf: ia.leaf, box: ia.box, encl: ia.encl,
			exit: make(chan struct{}), reader: make(chan struct{})}
		reused := false
		if pooled {
			reused = c.takeIdle(key)
		}
		if !reused {
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
	sys := &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd}
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
	var pid int
	start := func() {
		pid, err = reaper.StartOwned(func() (int, error) {
			pid, _, err := syscall.StartProcess("/proc/self/exe", []string{"corral-shim"}, &syscall.ProcAttr{
				Env: []string{shim.RoleEnv + "=" + role}, Files: files, Sys: sys})
			return pid, err
		})
	}
	if sys.Pdeathsig != 0 {
		c.unbind = spawnBound(start)
	} else {
		start()
	}
	if err != nil {
		c.unbound()
		return fmt.Errorf("starting the run's init: %w", err)
	}
	c.init, c.ownInit = pid, true
	if pidfd >= 0 {
		c.initFD = os.NewFile(uintptr(pidfd), "pidfd")
	}
	if st, err := procfs.ReadStat(pid); err == nil {
		c.initStart = st.Start
	}
	return nil
}

// sandboxAttr sets the namespaces of a sandbox's init: new user, mount,
// pid, IPC and UTS namespaces, and network unless the run keeps the
// host's; the user and group mapped to themselves (root: every id, so that
// files keep their owners); the capabilities the init needs to build the
// sandbox kept across its exec when it is not root; and death with this
// process.
func sandboxAttr(sys *syscall.SysProcAttr, p *sandbox.Policy) {
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
	sys.Pdeathsig = syscall.SIGKILL
}

// recvStart waits for the init's first word: the command runs, or why not.
func (c *initChild) recvStart() (shim.Msg, []*os.File, error) {
	type got struct {
		m     shim.Msg
		files []*os.File
		err   error
	}
	ch := make(chan got, 1)
	go func() {
		for {
			m, files, err := c.ctl.Recv()
			if err == nil && m.Op == shim.OpIdle {
				continue // an idle init's answer to its last run
			}
			ch <- got{m, files, err}
			return
		}
	}()
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case g := <-ch:
		switch {
		case errors.Is(g.err, io.EOF):
			return g.m, nil, errors.New("the run's init exited before starting the command")
		case g.err != nil:
			return g.m, nil, fmt.Errorf("the run's init: %w", g.err)
		case g.m.Op == shim.OpFailed:
			shimCloseAll(g.files)
			return g.m, nil, &initFailure{stage: g.m.Stage, err: g.m.Error()}
		}
		return g.m, g.files, nil
	case <-t.C:
		c.ctl.Close()
		g := <-ch
		shimCloseAll(g.files)
		return shim.Msg{}, nil, fmt.Errorf("the run's init did not start the command within %v", startWait)
	}
}

// adopt takes the command's and the init's pidfds from a Started message.
func (c *initChild) adopt(m shim.Msg, files []*os.File, ia initAttr) error {
	want := 2
	if ia.holder {
		want = 0
	}
	if (m.Op != shim.OpStarted && m.Op != shim.OpReady) || len(files) < want {
		shimCloseAll(files)
		return fmt.Errorf("the run's init answered %q", m.Op)
	}
	c.mechs, c.abi = m.Mechanisms, m.LandlockABI
	rest := files
	if !ia.holder {
		c.pidfd, rest = files[0], files[1:]
		if c.initFD == nil {
			c.initFD = rest[0]
		} else {
			rest[0].Close()
		}
		rest = rest[1:]
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
			if err := c.box.serve(rest[0]); err != nil {
				shimCloseAll(rest)
				return err
			}
			rest = rest[1:]
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

// read follows the init's reports until its end closes.
func (c *initChild) read() {
	defer close(c.reader)
	for {
		m, files, err := c.ctl.Recv()
		shimCloseAll(files)
		if err != nil {
			break
		}
		if m.Op == shim.OpExited {
			c.status = exitStatus{exited: true, code: m.Code, signal: syscall.Signal(m.Signal)}
			if m.Signal != 0 {
				c.status.code = -1
			}
			c.markExited()
			if c.poolable {
				// The init says nothing more of this run; its socket may
				// serve the next one.
				break
			}
		}
	}
	// The init is gone, or release closed corral's end. If the command
	// still runs, its exit is watched through its pidfd (release closes it
	// to end this wait); its status is unknown.
	if !c.exitedNow() && c.pidfd != nil {
		waitPidfd(c.pidfd)
	}
	c.markExited()
}

func (c *initChild) markExited() { c.stopOnce.Do(func() { close(c.exit) }) }

func (c *initChild) exitedNow() bool {
	select {
	case <-c.exit:
		return true
	default:
		return false
	}
}

// waitPidfd blocks until the process of the pidfd has exited.
func waitPidfd(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err != nil || n > 0
	})
}

func (c *initChild) handle() Handle {
	return Handle{Pid: c.pid, StartTicks: c.start, Cgroup: c.cgroupPath(), Containment: c.tier, Init: c.init, InitStartTicks: c.initStart}
}

func (c *initChild) cgroupPath() string {
	if c.leaf != nil {
		return c.leaf.Path
	}
	return ""
}

func (c *initChild) note() string            { return c.why }
func (c *initChild) limitsNote() string      { return c.limits }
func (c *initChild) exited() <-chan struct{} { return c.exit }

func (c *initChild) signalMain(sig syscall.Signal) error {
	rc, err := c.pidfd.SyscallConn()
	if err != nil {
		return os.ErrProcessDone
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.PidfdSendSignal(int(fd), sig, nil, 0) }); err != nil {
		return os.ErrProcessDone
	}
	if errors.Is(serr, unix.ESRCH) {
		return os.ErrProcessDone
	}
	return serr
}

func (c *initChild) signalTree(sig syscall.Signal) []procKey {
	keys := c.tree.signal(sig)
	if sig != unix.SIGKILL && sig != unix.SIGCONT {
		c.tree.signal(unix.SIGCONT)
	}
	return keys
}

func (c *initChild) killTree() []procKey { return c.tree.kill() }

func (c *initChild) images() map[procKey]string { return images(c.tree) }

func (c *initChild) signalLate(sig syscall.Signal, sent map[procKey]string, execs bool) []procKey {
	return signalLate(c.tree, sig, sent, execs)
}

func (c *initChild) alive() int {
	n := 0
	for _, m := range c.tree.members() {
		if m.pid != c.pid {
			n++
		}
	}
	if !c.exitedNow() {
		n++
	}
	return n
}

func (c *initChild) dying() (stuck []stuckProc, others int) {
	look := func(pid int) {
		st, err := procfs.ReadStat(pid)
		switch {
		case err != nil || st.Zombie():
		case st.State == 'D':
			stuck = append(stuck, stuckProc{pid: pid, comm: st.Comm, state: st.State})
		default:
			others++
		}
	}
	for _, m := range c.tree.members() {
		look(m.pid)
	}
	return stuck, others
}

func (c *initChild) finish(detach bool) (exitStatus, error) {
	if !c.exitedNow() {
		// The command survived SIGKILL (stuck in the kernel): the run
		// reports it among its survivors. The init keeps reaping; it
		// exits, and is reaped, once its tree is gone.
		c.report = c.sandboxReport()
		c.release(true)
		return exitStatus{}, nil
	}
	keep := detach && c.alive() > 0
	c.report = c.sandboxReport()
	c.release(keep)
	return c.status, nil
}

// release lets the init go: at once when the tree is gone, or, with keep,
// once what is left of it has gone (a detached tree, survivors).
func (c *initChild) release(keep bool) {
	if keep {
		c.ctl.Send(shim.Msg{Op: shim.OpDetach})
		// The init keeps reaping what was left; when it exits at last, the
		// reaper takes it.
		c.ctl.Close()
		c.closeFDs() // ends the reader's wait on a command that survived
		<-c.reader
		c.releaseBox()
		if c.ownInit {
			c.reapLater()
		}
		return
	}
	if c.poolable && c.reuse() {
		return
	}
	// The tree is gone. The init exits at once, but its exit takes the
	// namespaces down with it, which the kernel may take milliseconds to
	// do: reap it in the background, and its cgroup leaf after it.
	c.ctl.Send(shim.Msg{Op: shim.OpExit})
	c.ctl.Close()
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	<-c.reader
	c.releaseBox()
	initFD, leaf := c.initFD, c.leaf
	go func() {
		c.waitInit()
		if initFD != nil {
			initFD.Close()
		}
		if leaf != nil {
			leaf.Close()
		}
	}()
}

// reuse hands the init, whose tree is gone, to the pool of idle ones. It
// reports false, having sent nothing, when the pool is full.
func (c *initChild) reuse() bool {
	pool.mu.Lock()
	full := len(pool.idle[c.poolKey]) >= poolMax
	pool.mu.Unlock()
	if full {
		return false
	}
	<-c.reader // ended at the command's exit
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	// The init answers Idle once it waits for the next run; whoever takes
	// it next skips that answer.
	if c.ctl.Send(shim.Msg{Op: shim.OpIdle}) != nil || !c.putIdle() {
		go c.letGo()
	}
	return true
}

// waitInit waits for the init to exit after Exit (it kills anything left
// first), SIGKILLs it if it does not within a bound, and reaps it.
func (c *initChild) waitInit() {
	if c.initFD == nil {
		return
	}
	done := make(chan struct{})
	go func() { waitPidfd(c.initFD); close(done) }()
	t := time.NewTimer(killWait)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		unix.PidfdSendSignal(int(c.initFD.Fd()), unix.SIGKILL, nil, 0)
		<-done
	}
	if c.ownInit {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(c.init, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		reaper.Disown(c.init)
	}
	c.unbound()
}

// reapLater hands the init, still holding part of its tree, to the reaper.
func (c *initChild) reapLater() {
	pid, start, unbound := c.init, c.initStart, c.unbound
	reaper.Disown(pid)
	reaper.RegisterUntil(func(z *reaper.Zombie) bool { return z.Pid == pid && z.Start == start }, func() bool {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.Start != start {
			unbound()
			return true
		}
		return false
	})
}

// unbound lets the spawner's thread go once no init it forked lives.
func (c *initChild) unbound() {
	if c.unbind != nil {
		c.unbind()
	}
}

func (c *initChild) closeFDs() {
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	if c.initFD != nil {
		c.initFD.Close()
	}
}

func (c *initChild) releaseBox() {
	if c.box != nil {
		c.box.close()
	}
}

// abandonInit undoes a start that failed: the init is killed and reaped.
func (c *initChild) abandonInit() {
	if c.ctl != nil {
		c.ctl.Close()
	}
	if c.ownInit && c.init > 0 {
		if c.initFD != nil {
			unix.PidfdSendSignal(int(c.initFD.Fd()), unix.SIGKILL, nil, 0)
		} else {
			unix.Kill(c.init, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(c.init, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		reaper.Disown(c.init)
	}
	c.unbound()
	c.closeFDs()
	if c.leaf != nil {
		c.leaf.Close()
	}
	c.releaseBox()
}

// sandboxResult returns what held the run, once finish has run.
func (c *initChild) sandboxResult() *corral.SandboxReport { return c.report }

// sandboxReport says what held the run.
func (c *initChild) sandboxReport() *corral.SandboxReport {
	switch {
	case c.encl != nil:
		r := c.encl.Report()
		return &r
	case c.box != nil:
		return c.box.report(c.mechs, c.abi)
	}
	return nil
}

// initTree is the tree below an init: its descendants, exactly, since the
// init is a subreaper or pid 1 of a namespace of its own. With pgid, it is
// only those of the process group pgid (the process-group tier), and the
// group is signalled as a whole.
type initTree struct {
	root int
	pgid int
}

func (t *initTree) members() []procKey {
	// A walk is not a snapshot: an empty answer is trusted only when a
	// second walk agrees.
	for i := 0; i < 2; i++ {
		var out []procKey
		for _, st := range procfs.Descendants(t.root) {
			if !st.Zombie() && (t.pgid == 0 || st.Pgid == t.pgid) {
				out = append(out, procKey{pid: st.Pid, start: st.Start})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func (t *initTree) signal(sig unix.Signal) []procKey {
	var out []procKey
	for _, k := range t.members() {
		if procfs.Signal(k.pid, k.start, sig) == nil {
			out = append(out, k)
		}
	}
	return out
}

func (t *initTree) signalMember(k procKey, sig unix.Signal) error {
	return procfs.Signal(k.pid, k.start, sig)
}

func (t *initTree) kill() []procKey {
	var out []procKey
	if t.pgid != 0 {
		// Only the group: freeze it with SIGSTOP until no new member
		// appears, then kill the members.
		stopped := map[procKey]bool{}
		for round := 0; round < 64; round++ {
			fresh := 0
			for _, k := range t.members() {
				if !stopped[k] && procfs.Signal(k.pid, k.start, unix.SIGSTOP) == nil {
					stopped[k] = true
					fresh++
				}
			}
			if fresh == 0 {
				break
			}
		}
		for k := range stopped {
			if procfs.Signal(k.pid, k.start, unix.SIGKILL) == nil {
				out = append(out, k)
			}
		}
		return out
	}
	for _, st := range shim.KillDescendants(t.root) {
		out = append(out, procKey{pid: st.Pid, start: st.Start})
	}
	return out
}

func (t *initTree) claim(*reaper.Zombie) bool { return false }
func (t *initTree) release(bool) func() bool  { return nil }
func (t *initTree) cgroupPath() string        { return "" }

func shimCloseAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// The pool of idle inits. An init whose plain run is over may serve the
// next plain run of the same user: starting an init execs this program
// (milliseconds), handing a run to an idle one costs a round trip. Idle
// inits hold nothing and die with this process like any init; a few are
// kept, for a while.
const (
	poolMax  = 8                // idle inits kept per user
	poolIdle = 60 * time.Second // an init idle longer is let go
)

// idleInit is an init that waits for a run.
type idleInit struct {
	ctl   *shim.Conn
	pid   int
	start uint64
	fd    *os.File // its pidfd
	since time.Time
}

var pool struct {
	mu   sync.Mutex
	idle map[string][]*idleInit // by credKey, most recent last
}

// credKey names the user an init runs as.
func credKey(c *Credential) string {
	if c == nil {
		return ""
	}
	return fmt.Sprint(c.UID, ":", c.GID, ":", c.Groups)
}

// takeIdle gives c an idle init of the user key, if there is one.
func (c *initChild) takeIdle(key string) bool {
	pool.mu.Lock()
	list := pool.idle[key]
	var in *idleInit
	if n := len(list); n > 0 {
		in, pool.idle[key] = list[n-1], list[:n-1]
	}
	pool.mu.Unlock()
	if in == nil {
		return false
	}
	shim.Unkeep(in.ctl.Fd(), int(in.fd.Fd()))
	c.ctl, c.init, c.initStart, c.initFD, c.ownInit = in.ctl, in.pid, in.start, in.fd, true
	return true
}

// putIdle keeps c's init for another run, or reports false when the pool
// is full.
func (c *initChild) putIdle() bool {
	now := time.Now()
	pool.mu.Lock()
	if pool.idle == nil {
		pool.idle = map[string][]*idleInit{}
	}
	list := pool.idle[c.poolKey]
	// Let go of those idle too long, oldest first.
	var stale []*idleInit
	for len(list) > 0 && now.Sub(list[0].since) > poolIdle {
		stale, list = append(stale, list[0]), list[1:]
	}
	ok := len(list) < poolMax
	if ok {
		list = append(list, &idleInit{ctl: c.ctl, pid: c.init, start: c.initStart, fd: c.initFD, since: now})
		shim.Keep(c.ctl.Fd(), int(c.initFD.Fd()))
	}
	pool.idle[c.poolKey] = list
	pool.mu.Unlock()
	for _, in := range stale {
		shim.Unkeep(in.ctl.Fd(), int(in.fd.Fd()))
		old := &initChild{ctl: in.ctl, init: in.pid, initStart: in.start, initFD: in.fd, ownInit: true, reader: closedChan}
		go old.letGo()
	}
	return ok
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// letGo tells an init whose tree is gone to exit, and reaps it.
func (c *initChild) letGo() {
	c.ctl.Send(shim.Msg{Op: shim.OpExit})
	c.ctl.Close()
	c.waitInit()
	if c.initFD != nil {
		c.initFD.Close()
	}
}
