package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/shimprog"
)

// linuxChild is a main process started with a pidfd, in a session of its
// own, held by one of the Linux tiers.
type linuxChild struct {
	pid     int
	empty   bool          // the main process exited and nothing of the tree is left
	settled time.Duration // how long finish waited for the tree's last orphans
	start   func() uint64 // start time of the main process, read on first use
	pidfd   *os.File      // pollable; readable once the process exits
	exit    chan struct{}
	tree    tree
	tier    corral.Containment
	why     string
	limits  string

	unclaim func()

	guardian *shim.Guardian // kills the leaf if this process dies
	bindNote string         // why nothing binds the tree to this process
}

// tree is one Linux containment tier.
type tree interface {
	members() []procKey // live processes of the tree, main included while alive
	signalMember(k procKey, sigs ...unix.Signal) error
	kill() []procKey
	claim(z *reaper.Zombie) bool // for the reaper: is this orphan ours?
	release(detach bool) (kept func() bool)
	cgroupPath() string
}

func init() {
	// What corral started and no run of this process owns is this
	// process's to reap, and nobody else's: a shim (the guardian, an init
	// handed to the reaper, the idle inits of a corral process that exited
	// below this one) and a process that exited in a run's cgroup leaf (the
	// tree of a supervisor that was killed below this one, which its
	// guardian killed). Both come here as orphans when their supervisor was
	// started by other code of this program, outside any run.
	reaper.Inherit(func(z *reaper.Zombie) bool {
		return z.Comm == shim.Comm || cgroup.IsRunLeaf(z.Cgroup()) || isGuardian(z)
	})
}

func spawn(a *spawnAttr) (child, error) {
	if (a.sandbox.Enabled() || a.guard != nil) && a.enclosure == nil {
		tier, err := sandboxTier(a)
		if err != nil {
			return nil, err
		}
		if err := checkShareGroup(a, a.tier); err != nil {
			return nil, err
		}
		return spawnSandboxed(a, tier)
	}
	tier, why, err := chooseTier(a.tier)
	if err != nil {
		return nil, err
	}
	if tier == corral.ContainmentPidNamespace && !a.sandbox.Enabled() && a.guard == nil && a.enclosure == nil {
		return nil, fmt.Errorf("%w: the pidns tier holds sandboxed runs only", ErrTierUnavailable)
	}
	if err := checkShareGroup(a, tier); err != nil {
		return nil, err
	}
	switch {
	case a.enclosure != nil:
		return spawnInEnclosure(a)
	case tier != corral.ContainmentCgroup:
		c, err := startInit(a, initAttr{tier: tier, why: why, limits: noLimits(a.limit)})
		var f *initFailure
		if err == nil || !errors.As(err, &f) || f.stage == "start" {
			return c, err
		}
		// The init could not run here (this program cannot be executed
		// again, say): hold the tree from this process, unbound.
		d, derr := spawnDirect(a, tier, why)
		if lc, ok := d.(*linuxChild); ok {
			lc.bindNote = "no init: " + err.Error()
		}
		return d, derr
	}
	return spawnDirect(a, tier, why)
}

func noLimits(l Limits) string {
	if l != (Limits{}) {
		return "limits not applied: they need the cgroup tier"
	}
	return ""
}

// sandboxTier is the tier of a sandboxed or guarded run. Its pid
// namespace holds the tree exactly and dies with corral: a cgroup leaf
// adds nothing unless the cgroup tier is asked for, or limits need one
// where the machine has it, and only then is a cgroup directory looked
// for (and made).
func sandboxTier(a *spawnAttr) (corral.Containment, error) {
	if a.tier == corral.ContainmentAuto && a.limit == (Limits{}) && !mutant.SandboxDetects {
		return corral.ContainmentPidNamespace, nil
	}
	tier, _, err := chooseTier(a.tier)
	if err != nil {
		return "", err
	}
	if tier == corral.ContainmentCgroup && (a.tier == corral.ContainmentCgroup || a.limit != (Limits{})) {
		return tier, nil
	}
	return corral.ContainmentPidNamespace, nil
}

// spawnSandboxed starts a sandboxed (or guarded) run: an init in
// namespaces of its own, in a cgroup leaf when the tier is cgroup.
func spawnSandboxed(a *spawnAttr, tier corral.Containment) (child, error) {
	uid := -1
	if a.cred != nil {
		uid = int(a.cred.UID)
	}
	early := forkEarly(a, tier)
	b, err := newRunBox(a, uid)
	if err != nil {
		early.abandon()
		return nil, err
	}
	a.env = append(a.env, b.env...)
	ia := initAttr{tier: tier, policy: b.policy, box: b, limits: noLimits(a.limit), early: early}
	if ia.tier == corral.ContainmentCgroup {
		root, _ := cgroup.Detect()
		if ia.leaf, err = root.NewLeaf(a.label); err != nil {
			b.close()
			return nil, err
		}
		ia.limits = applyLimits(root, ia.leaf, a.limit)
	}
	c, err := startInit(a, ia)
	if err != nil {
		return nil, b.startError(err)
	}
	// While the command runs, beside it: no command waits for these, and
	// the run's end waits for them (releaseBox), so that none outlives it.
	c.chores = make(chan struct{})
	go func() {
		defer close(c.chores)
		if hold := choresHeld.Load(); hold != nil {
			<-*hold
		}
		sweepBoxTmpsDue()
		if ia.leaf != nil {
			root, _ := cgroup.Detect()
			root.Sweep()
		}
	}()
	return c, nil
}

// spawnInEnclosure starts a run in an enclosure: the enclosure's holder
// forks its init.
func spawnInEnclosure(a *spawnAttr) (child, error) {
	e := a.enclosure
	a.env = append(a.env, e.impl.box.env...)
	c, err := startInit(a, initAttr{tier: corral.ContainmentSubreaper, encl: e, limits: noLimits(a.limit)})
	if err != nil {
		if e.isClosed() {
			return nil, fmt.Errorf("%w: %v", ErrEnclosureClosed, err)
		}
		return nil, sandboxStartError(err)
	}
	return c, nil
}

// sandboxStartError says that the sandbox could not be built, when that
// is what failed, so that callers refuse with the reason.
func sandboxStartError(err error) error {
	var f *initFailure
	if errors.As(err, &f) && f.stage != "start" {
		return fmt.Errorf("%w: %s: %w", ErrSandboxUnavailable, f.stage, f.err)
	}
	return err
}

// spawnDirect starts the main process as this process's child, held by
// a cgroup leaf (with the guardian) or, without an init, by this process
// as a subreaper or by the process group.
func spawnDirect(a *spawnAttr, tier corral.Containment, why string) (child, error) {
	var err error
	c := &linuxChild{tier: tier, why: why, exit: make(chan struct{})}
	sys := &syscall.SysProcAttr{Setsid: !a.shareGroup}
	pidfd := -1
	sys.PidFD = &pidfd
	if a.cred != nil {
		sys.Credential = &syscall.Credential{Uid: a.cred.UID, Gid: a.cred.GID, Groups: a.cred.Groups}
		if sys.Credential.Groups == nil {
			sys.Credential.Groups = []uint32{}
		}
	}
	var leaf *cgroup.Leaf
	var root *cgroup.Root
	if tier == corral.ContainmentCgroup {
		root, _ = cgroup.Detect()
		leaf, err = root.NewLeaf(a.label)
		if err != nil {
			return nil, err
		}
		c.limits = applyLimits(root, leaf, a.limit)
		sys.UseCgroupFD = true
		sys.CgroupFD = leaf.FD()
		// Started by the first run: its command starts once it is up.
		if mutant.GuardianUnawaited {
			go cgroupGuardian(root)
			c.bindNote = "the guardian was not waited for"
		} else if g, err := cgroupGuardian(root); err == nil {
			c.guardian = g
		} else {
			c.bindNote = err.Error()
		}
	} else {
		c.limits = noLimits(a.limit)
		c.bindNote = "the tree is held by this process alone"
	}
	if tier == corral.ContainmentSubreaper || tier == corral.ContainmentCgroup {
		// Orphans come to us, so their zombies can be reaped.
		if err := reaper.Enable(); err != nil && tier == corral.ContainmentSubreaper {
			return nil, fmt.Errorf("%w: subreaper: %v", ErrTierUnavailable, err)
		}
	}
	if err := a.waitHold(); err != nil {
		if leaf != nil {
			leaf.Close()
		}
		return nil, err
	}
	fds := []uintptr{a.files[0].Fd(), a.files[1].Fd(), a.files[2].Fd()}
	pid, err := reaper.StartOwned(func() (int, error) {
		pid, err := startProcess(a.path, a.args, &syscall.ProcAttr{Dir: a.dir, Env: a.env, Files: fds, Sys: sys})
		return pid, err
	})
	if err != nil {
		if leaf != nil {
			leaf.Close()
			if a.tier == corral.ContainmentAuto && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) && !errors.Is(err, syscall.ENOEXEC) {
				// clone3 into a cgroup refused (old kernel, seccomp): fall
				// back to the next tier rather than fail the run.
				b := *a
				b.tier = corral.ContainmentSubreaper
				ch, err2 := spawn(&b)
				if err2 == nil {
					switch ch := ch.(type) {
					case *linuxChild:
						ch.why = "cgroup spawn failed: " + err.Error()
					case *initChild:
						ch.why = "cgroup spawn failed: " + err.Error()
					}
				}
				return ch, err2
			}
		}
		return nil, err
	}
	c.pid = pid
	if leaf != nil && !mutant.LeafFDKept {
		leaf.ReleaseFD() // the process is in: one descriptor fewer per run
	}
	c.start = sync.OnceValue(func() uint64 {
		// Readable while the main process is unreaped, that is while
		// the run lasts.
		if st, err := procfs.ReadStat(pid); err == nil {
			return st.Start
		}
		return 0
	})
	if pidfd >= 0 {
		if err := unix.SetNonblock(pidfd, true); err == nil {
			c.pidfd = os.NewFile(uintptr(pidfd), "pidfd")
		} else {
			unix.Close(pidfd)
		}
	}
	switch tier {
	case corral.ContainmentCgroup:
		c.tree = &cgroupTree{leaf: leaf, main: pid}
	case corral.ContainmentSubreaper:
		c.tree = newReapTree(pid, c.start)
	default:
		c.tree = &pgroupTree{pgid: pid, main: pid}
	}
	c.unclaim = reaper.Register(c.tree.claim)
	go c.waitExit()
	if root != nil {
		root.Sweep() // while the command runs: nothing waits for it
	}
	return c, nil
}

// chooseTier picks the tier for a run and says why a stronger one was not
// used. Asking for a tier that is unavailable is an error.
func chooseTier(want corral.Containment) (corral.Containment, string, error) {
	switch want {
	case corral.ContainmentAuto:
		_, err := cgroup.Detect()
		if err == nil {
			return corral.ContainmentCgroup, "", nil
		}
		if rerr := reaper.Enable(); rerr == nil {
			return corral.ContainmentSubreaper, "no cgroup: " + err.Error(), nil
		} else {
			return corral.ContainmentProcessGroup, "no cgroup: " + err.Error() + "; no subreaper: " + rerr.Error(), nil
		}
	case corral.ContainmentCgroup:
		if _, err := cgroup.Detect(); err != nil {
			return "", "", fmt.Errorf("%w: %v", ErrTierUnavailable, err)
		}
	case corral.ContainmentSubreaper, corral.ContainmentProcessGroup:
	case corral.ContainmentPidNamespace:
		// Chosen for a sandboxed run; without a sandbox there is no
		// namespace to hold the tree.
	default:
		return "", "", fmt.Errorf("%w: %s is not available on Linux", ErrTierUnavailable, want)
	}
	return want, "", nil
}

func applyLimits(root *cgroup.Root, leaf *cgroup.Leaf, l Limits) string {
	if l == (Limits{}) {
		return ""
	}
	has := map[string]bool{}
	for _, c := range root.Controllers {
		has[c] = true
	}
	var applied, missing []string
	var pids int
	var mem int64
	if l.Pids > 0 {
		if has["pids"] {
			pids = l.Pids
			applied = append(applied, fmt.Sprintf("pids.max=%d", l.Pids))
		} else {
			missing = append(missing, "pids")
		}
	}
	if l.Memory > 0 {
		if has["memory"] {
			mem = l.Memory
			applied = append(applied, fmt.Sprintf("memory.max=%d", l.Memory))
		} else {
			missing = append(missing, "memory")
		}
	}
	if err := leaf.SetLimits(pids, mem); err != nil {
		return "limits not applied: " + err.Error()
	}
	note := strings.Join(applied, " ")
	if len(missing) > 0 {
		if note != "" {
			note += "; "
		}
		note += "not applied (controller not enabled on the cgroup v2 hierarchy): " + strings.Join(missing, ", ")
	}
	return note
}

// waitExit closes c.exit when the main process has exited, without reaping
// it, parked in the poller on the pidfd.
func (c *linuxChild) waitExit() {
	defer close(c.exit)
	if c.pidfd == nil {
		// No pidfd (kernel before 5.3): wait in a thread, not reaping.
		for {
			var info siginfo
			if err := waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT); err != unix.EINTR {
				return
			}
		}
	}
	rc, err := c.pidfd.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		var info siginfo
		err := waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG)
		return err != nil || info.pid != 0
	})
}

// siginfo is the part of siginfo_t that waitid fills for SIGCHLD.
type siginfo struct {
	signo  int32
	errno  int32
	code   int32
	_      int32
	pid    int32
	uid    uint32
	status int32
	_      [100]byte
}

func waitid(idtype, id int, info *siginfo, options int) error {
	_, _, e := unix.Syscall6(unix.SYS_WAITID, uintptr(idtype), uintptr(id), uintptr(unsafe.Pointer(info)), uintptr(options), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func (c *linuxChild) handle() Handle {
	return Handle{Pid: c.pid, StartTicks: c.start(), Cgroup: c.tree.cgroupPath(), Containment: c.tier}
}

func (c *linuxChild) note() string { return c.why }

func (c *linuxChild) exitFile() *os.File { return c.pidfd }

func (c *linuxChild) othersWait() time.Duration { return c.settled }

func (c *linuxChild) binding() (string, string) {
	if c.guardian != nil {
		return BindingGuardian, ""
	}
	return "", c.bindNote
}

func (c *initChild) binding() (string, string) { return c.bound, "" }

// detachNote says why processes a run detached end with this process
// after all, when they do.
func (c *linuxChild) detachNote() string {
	if t, ok := c.tree.(*cgroupTree); ok {
		return t.detachNote
	}
	return ""
}

func (c *initChild) detachNote() string       { return c.detachErr }
func (c *linuxChild) limitsNote() string      { return c.limits }
func (c *linuxChild) exited() <-chan struct{} { return c.exit }

func (c *linuxChild) signalMain(sig syscall.Signal) error {
	if c.pidfd != nil {
		return pidfdSignal(c.pidfd, sig)
	}
	// The pid is our unreaped child: it cannot have been recycled.
	return unix.Kill(c.pid, sig)
}

// pidfdSignal sends sig through a pidfd, held open against a concurrent
// close; it reports os.ErrProcessDone once the process is gone.
func pidfdSignal(f *os.File, sig syscall.Signal) error {
	rc, err := f.SyscallConn()
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

// dyingState sorts pid, after SIGKILL, into stuck (uninterruptible
// sleep) or about to die once scheduled; gone and zombie count as neither.
func dyingState(pid int, stuck *[]stuckProc, others *int) {
	st, err := procfs.ReadStat(pid)
	switch {
	case err != nil || st.Zombie():
	case st.State == 'D':
		*stuck = append(*stuck, stuckProc{pid: pid, comm: st.Comm, state: st.State})
	default:
		*others++
	}
}

func (c *linuxChild) signalTree(sig syscall.Signal) []procKey { return signalTree(c.tree, sig) }

func (c *linuxChild) signalLate(sig syscall.Signal, sent map[procKey]sentProc) []procKey {
	return signalLate(c.tree, sig, sent)
}

func (c *linuxChild) stopTree(sig syscall.Signal) (map[procKey]sentProc, []procKey) {
	return stopTree(c.tree, sig)
}

// signalLate sends sig to the members of t that joined the tree since the
// first signal, and to those that run another program than when they got
// it, if they executed it within execWindow of the signal on their own
// clock: a shell's child forked while the shell held the signal blocked
// may catch it in the shell's inherited handler and lose it when it
// executes the command. The time the machine withheld a CPU since the
// signal does not count (the process's own wait on a run queue, or, larger,
// the machine's CPU stall time, which covers this supervisor's wait to look
// too): on a machine whose cores are busy the process may wait longer than
// the window before it runs at all. What is judged is when the process
// executed, not when this supervisor looked: a look that finds another
// program signals again unless an earlier look already found the first
// one past the window (a supervisor starved for a second looks late, at a
// command executed in the window's first milliseconds).
func signalLate(t tree, sig syscall.Signal, sent map[procKey]sentProc) []procKey {
	var out []procKey
	stall := procfs.CPUStall()
	for _, k := range t.members() {
		was, ok := sent[k]
		if ok && was.past {
			continue // what it executes now, it executes past the window
		}
		past := false
		if ok {
			if wall := time.Since(was.at); wall >= execWindow {
				// Its own wait since the signal, or the machine's stall,
				// whichever is larger: the machine's is a mean over its
				// CPUs, less than the wait of a process queued on one busy
				// CPU while the other ran. Where its wait at the signal
				// went unread (the machine's stall was), its whole life's
				// wait counts: more, never less.
				own := runWait(k.pid) - was.wait
				if mutant.LateOwnWaitIgnored && stall > 0 {
					own = 0
				}
				starved := max(own, stall-was.stall)
				past = wall-starved >= execWindow
			}
		}
		if past && mutant.LateByLook {
			continue
		}
		now := image(k.pid)
		if ok && was.image == now {
			if past {
				was.past = true
				sent[k] = was
			}
			continue
		}
		if goingOut(k) {
			continue
		}
		if t.signalMember(k, withCont(sig)...) == nil {
			sent[k] = sentProc{image: now, at: time.Now(), wait: ownWait(k.pid, stall), stall: stall}
			out = append(out, k)
		}
	}
	return out
}

// stopTree sends sig, and SIGCONT after it, to every live member of t, in
// one walk, having noted first the program each runs and how long each
// has waited for a CPU so far (for signalLate): a process that executes
// another program after its signal must be found to have done so. A tree
// of a process group is then signalled as a group too, which no fork can
// race.
func stopTree(t tree, sig unix.Signal) (map[procKey]sentProc, []procKey) {
	sent := map[procKey]sentProc{}
	var out []procKey
	at, stall := time.Now(), procfs.CPUStall()
	for _, k := range t.members() {
		if goingOut(k) {
			continue
		}
		sp := sentProc{image: image(k.pid), at: at, wait: ownWait(k.pid, stall), stall: stall}
		if t.signalMember(k, withCont(sig)...) == nil {
			sent[k] = sp
			out = append(out, k)
		}
	}
	if g, ok := t.(groupTree); ok {
		for _, s := range withCont(sig) {
			g.signalGroup(s)
		}
	}
	return sent, out
}

// signalTree sends sig to every live member of t, followed by SIGCONT
// unless followWithCont says otherwise, and to the group of a tree that is
// a process group, for SignalTree: nothing is noted for signalLate, since
// nothing escalates.
func signalTree(t tree, sig unix.Signal) []procKey {
	sigs := []unix.Signal{sig}
	if followWithCont(sig) {
		sigs = append(sigs, unix.SIGCONT)
	}
	var out []procKey
	for _, k := range t.members() {
		if !goingOut(k) && t.signalMember(k, sigs...) == nil {
			out = append(out, k)
		}
	}
	if g, ok := t.(groupTree); ok {
		for _, s := range sigs {
			g.signalGroup(s)
		}
	}
	return out
}

func (c *initChild) leftGoing() bool  { return treeGoing(c.tree, c.pid) }
func (c *linuxChild) leftGoing() bool { return treeGoing(c.tree, c.pid) }

// treeGoing reports whether every member of t but main is on its way out
// by itself (goingOut), none in uninterruptible sleep: one stuck in its
// exit (a hung file system's close) is for the teardown, which waits for
// it and reports it among the survivors.
func treeGoing(t tree, main int) bool {
	for _, k := range t.members() {
		if k.pid == main {
			continue
		}
		st, err := procfs.ReadStat(k.pid)
		if err != nil || k.start != 0 && st.Start != k.start {
			continue // gone
		}
		if !st.Exiting() || st.State == 'D' {
			return false
		}
	}
	return true
}

// goingOut reports whether the member k of a tree is gone or on its way
// out by itself (procfs.Stat.Exiting): in the kernel's exit, where a
// leftover that closed its pipes as it exited is found once the drain has
// seen them end. Such a process is neither signalled nor counted among
// those corral ended (Result.Killed); the tree's end still waits for it.
func goingOut(k procKey) bool {
	st, err := procfs.ReadStat(k.pid)
	return err != nil || k.start != 0 && st.Start != k.start || st.Exiting()
}

// groupTree is a tree that is a process group, which can be signalled as
// a whole.
type groupTree interface {
	signalGroup(sig unix.Signal)
}

// withCont returns sig followed by SIGCONT, so that a stopped process acts
// on it; SIGKILL and SIGCONT alone.
func withCont(sig unix.Signal) []unix.Signal {
	if sig == unix.SIGKILL || sig == unix.SIGCONT {
		return []unix.Signal{sig}
	}
	return []unix.Signal{sig, unix.SIGCONT}
}

// image names the program pid runs: its executable, which changes when it
// executes another program. (Its name changes with it; a program that
// executes itself again is not another program.)
func image(pid int) string {
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return exe
}

// runWait returns how long pid has waited for a CPU in its life (a test
// fakes it).
var runWait = procfs.RunWait

// ownWait returns how long pid has waited for a CPU in its life, where
// the machine's CPU stall time (stall, never less) is not kept; 0
// otherwise, so that a tree's thousand processes cost no read each.
func ownWait(pid int, stall time.Duration) time.Duration {
	if stall > 0 {
		return 0
	}
	return procfs.RunWait(pid)
}

func (c *linuxChild) killTree() []procKey { return c.tree.kill() }

func (c *linuxChild) alive() int {
	select {
	case <-c.exit:
		if c.tier == corral.ContainmentSubreaper && len(reaper.Orphans()) == 0 {
			// Everything left of the tree would hang below a child of
			// ours; there is none, so nothing is left, nor can anything
			// appear any more. No /proc scan, and nothing to reap later.
			c.empty = true
			return 0
		}
	default:
	}
	n := 0
	for _, m := range c.tree.members() {
		if m.pid == c.pid {
			continue // the main process is watched through its pidfd
		}
		n++
	}
	select {
	case <-c.exit:
	default:
		n++
	}
	return n
}

func (c *linuxChild) dying() (stuck []stuckProc, others int) {
	seen := map[int]bool{}
	look := func(pid int) {
		if !seen[pid] {
			seen[pid] = true
			dyingState(pid, &stuck, &others)
		}
	}
	select {
	case <-c.exit:
	default:
		look(c.pid)
	}
	for _, m := range c.tree.members() {
		look(m.pid)
	}
	return stuck, others
}

func (c *linuxChild) finish(detach bool) (exitStatus, error) {
	var st exitStatus
	select {
	case <-c.exit:
	default:
		// The main process survived SIGKILL (stuck in the kernel): do not
		// block on it. The reaper takes it whenever it finally exits
		// (claimed before it is disowned).
		if c.pidfd != nil {
			c.pidfd.Close()
		}
		pid, start := c.pid, c.start()
		claim := c.tree.claim
		reaper.RegisterUntil(func(z *reaper.Zombie) bool { return z.Pid == pid && z.Start == start || claim(z) }, func() bool {
			st, err := procfs.ReadStat(pid)
			return err != nil || st.Start != start
		})
		reaper.Disown(c.pid)
		if kept := c.tree.release(true); kept != nil {
			reaper.RegisterUntil(c.tree.claim, kept)
		}
		c.unclaim()
		// The run reports it among its survivors, with its state; its exit
		// status is unknown.
		return st, nil
	}
	ws, err := reapOwned(c.pid)
	if err == nil {
		st.exited = true
		switch {
		case ws.Exited():
			st.code = ws.ExitStatus()
		case ws.Signaled():
			st.code = -1
			st.signal = ws.Signal()
		}
	} else {
		err = fmt.Errorf("reaping main process: %w", err)
	}
	if c.pidfd != nil {
		c.pidfd.Close()
	}
	if c.empty {
		// alive saw the tree gone with no orphan to reap.
	} else if kids := reaper.Orphans(); len(kids) > 0 {
		// Orphans came to us: reap the tree's, waiting (bounded) for those
		// still on their way out when the tree is meant to be gone.
		if !detach && c.settle(kids, time.Now().Add(250*time.Millisecond)) {
			// A starved machine has not finished their exits yet: the
			// reaper takes them when they are done.
			reaper.RegisterUntil(c.tree.claim, func() bool { return !c.claimedOrphans() })
		}
		reaper.ReapOrphans(c.tree.claim)
	}
	if kept := c.tree.release(detach); kept != nil {
		// Detached processes live on: keep reaping them as they go, and
		// let them outlive this process (a cgroup leaf was moved out of
		// the guardian's reach).
		reaper.RegisterUntil(c.tree.claim, kept)
	}
	c.unclaim()
	return st, err
}

// reapOwned waits for pid, a child this process owns (reaper.Own), and
// reaps it: then the reaper may take a process that gets its pid.
func reapOwned(pid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	var err error
	for {
		if _, err = unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	reaper.Disown(pid)
	return ws, err
}

// guardian is the one guardian of this process's cgroup leaves, started
// with the first of them. Nobody waits for it: if it dies, the reaper
// takes it, known by its pid and start time (it may die before it could
// name itself a shim).
var guardian struct {
	once sync.Once
	g    *shim.Guardian
	err  error
	key  atomic.Pointer[procKey]
}

func cgroupGuardian(root *cgroup.Root) (*shim.Guardian, error) {
	guardian.once.Do(func() {
		if d := guardianDelay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		guardian.g, guardian.err = shim.StartGuardian(shimprog.Direct, root.Owner)
		if guardian.err != nil {
			guardian.err = fmt.Errorf("no guardian: %w", guardian.err)
			return
		}
		// Read at once: it is not reaped before it dies.
		if st, err := procfs.ReadStat(guardian.g.Pid()); err == nil {
			guardian.key.Store(&procKey{pid: st.Pid, start: st.Start})
		}
		// Not an orphan of any run: a run's end need not look at it.
		reaper.Helper(guardian.g.Pid())
	})
	return guardian.g, guardian.err
}

// guardianDelay, set by tests, delays the start of the guardian by as
// many nanoseconds.
var guardianDelay atomic.Int64

func isGuardian(z *reaper.Zombie) bool {
	k := guardian.key.Load()
	return k != nil && z.Pid == k.pid && z.Start == k.start
}

// settle reaps the tree's last orphans. A process leaves its cgroup, and
// stops counting as alive, a moment before it becomes a zombie and hands
// its children to us; so once the tree is gone, wait until no child of ours
// that belongs to it is still on its way out, reaping as they arrive. The
// wait is a few microseconds unless the machine is badly loaded, and bounded.
//
// It reports whether some are still on their way out at the deadline.
func (c *linuxChild) settle(kids []int, deadline time.Time) (pending bool) {
	for {
		pending = false
		for _, pid := range kids {
			st, err := procfs.ReadStat(pid)
			if err != nil {
				continue
			}
			z := &reaper.Zombie{Stat: st}
			if !c.tree.claim(z) {
				continue
			}
			if !st.Zombie() {
				pending = true
				continue
			}
			// A multithreaded process shows as a zombie as soon as its
			// main thread is done, but cannot be reaped before its other
			// threads are: wait4 then answers 0.
			var ws unix.WaitStatus
			if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == 0 {
				pending = true
			}
		}
		if !pending || !time.Now().Before(deadline) {
			return pending
		}
		slept := time.Now()
		time.Sleep(time.Millisecond)
		c.settled += time.Since(slept) // the orphans' time, not corral's
		kids = reaper.Orphans()
	}
}

// claimedOrphans reports whether a child of ours, live or zombie, belongs
// to the tree.
func (c *linuxChild) claimedOrphans() bool {
	for _, pid := range reaper.Orphans() {
		if st, err := procfs.ReadStat(pid); err == nil && c.tree.claim(&reaper.Zombie{Stat: st}) {
			return true
		}
	}
	return false
}

// choresHeld, set by a test, holds a sandboxed run's chores until the
// channel closes.
var choresHeld atomic.Pointer[chan struct{}]
