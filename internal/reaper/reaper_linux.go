// Package reaper makes the process a child subreaper and reaps the orphans
// that corral's runs leave behind, and only those.
//
// As a subreaper, this process inherits every orphan of its descendants.
// Each run registers a Claim that recognises its own orphans; a goroutine,
// alive while any claim is registered, reaps claimed zombies whenever a
// SIGCHLD arrives. Zombies no claim recognises are never reaped here, so a
// child that other code in this process waits for keeps its exit status.
//
// Some zombies are nobody's to wait for but this process's: those the
// Inherit claim recognises (corral's own helper processes that no run owns
// any more, and those of a corral process that died below this one and
// were handed to it as orphans). Such a zombie may appear while no run is
// in flight, so from the moment this process is a subreaper a sweep looks
// for reapable zombies every second for the rest of its life (a
// timer, one waitid when it fires; no goroutine waits for it): no zombie
// that this package may reap outlives a sweep, whether runs are in flight
// or not.
package reaper

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// A Claim reports whether a zombie child of this process belongs to a run
// (and may be reaped on its behalf).
type Claim func(*Zombie) bool

// Zombie is a zombie child of this process, offered to the claims.
type Zombie struct {
	procfs.Stat
	cgroup  string
	cgroupd bool
}

// Cgroup returns the cgroup v2 path the zombie exited in, read once. A
// cgroup removed since is reported by its path all the same.
func (z *Zombie) Cgroup() string {
	if !z.cgroupd {
		cg, _ := procfs.Cgroup2(z.Pid)
		z.cgroup = strings.TrimSuffix(cg, " (deleted)")
		z.cgroupd = true
	}
	return z.cgroup
}

type entry struct {
	claim    Claim
	finished func() bool
}

var (
	enableOnce sync.Once
	enableErr  error

	spawnMu sync.RWMutex // held while a child starts; reaping passes share it

	mu       sync.Mutex
	owned    = map[int]struct{}{}
	helpers  = map[int]struct{}{}
	claims   = map[int]entry{}
	inherit  Claim
	nextID   int
	running  bool
	sweeping bool
)

// Enable makes this process a child subreaper (PR_SET_CHILD_SUBREAPER),
// once, and starts the sweep that reaps, for the rest of the process's
// life, the zombies the claims and the Inherit claim recognise. The
// setting is process-wide and stays for the process's life.
func Enable() error {
	enableOnce.Do(func() {
		enableErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		if enableErr == nil {
			startSweep()
		}
	})
	return enableErr
}

// Inherit sets the claim for zombies that no run owns and nobody else in
// this process can be waiting for: they are reaped by every pass and every
// sweep. Children marked with Own are never offered to it.
func Inherit(c Claim) {
	mu.Lock()
	inherit = c
	mu.Unlock()
}

// startSweep arms the sweep, once.
func startSweep() {
	mu.Lock()
	defer mu.Unlock()
	if !sweeping {
		sweeping = true
		time.AfterFunc(passInterval, sweep)
	}
}

// sweep is the pass that does not depend on a SIGCHLD being seen: a zombie
// that came while no run was in flight, or whose SIGCHLD a pass took before
// its claim was registered, is reaped here. It re-arms itself.
func sweep() {
	if anyZombie() {
		Reap(nil)
	}
	expire()
	time.AfterFunc(passInterval, sweep)
}

// StartOwned runs start, which starts a child and returns its pid, and marks
// that child with Own before any reaping pass can see it: a child that
// exits at once is never mistaken for an orphan.
func StartOwned(start func() (int, error)) (int, error) {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	pid, err := start()
	if err == nil {
		Own(pid)
	}
	return pid, err
}

// Own marks pid as a child whose owner reaps it itself (the main process of
// a run). The reaper never takes an owned child, whatever the claims say.
func Own(pid int) {
	mu.Lock()
	owned[pid] = struct{}{}
	mu.Unlock()
}

// Disown undoes Own, once the owner has reaped pid.
func Disown(pid int) {
	mu.Lock()
	delete(owned, pid)
	mu.Unlock()
}

// Owned reports whether pid was marked with Own.
func Owned(pid int) bool {
	mu.Lock()
	defer mu.Unlock()
	_, ok := owned[pid]
	return ok
}

// Register adds a claim and returns the function that removes it. While at
// least one claim is registered a goroutine reaps claimed zombies on every
// SIGCHLD; it exits when the last claim is removed.
func Register(c Claim) (unregister func()) {
	id := add(entry{claim: c})
	return func() { remove(id) }
}

// RegisterUntil adds a claim that stays until finished reports true, checked
// after every reaping pass. It serves trees left running on purpose: their
// orphans are still reaped when they exit, and the claim goes with the last.
func RegisterUntil(c Claim, finished func() bool) {
	add(entry{claim: c, finished: finished})
}

func add(e entry) int {
	mu.Lock()
	defer mu.Unlock()
	nextID++
	claims[nextID] = e
	if !running {
		running = true
		go loop()
	}
	return nextID
}

func remove(id int) {
	mu.Lock()
	delete(claims, id)
	mu.Unlock()
}

// expire removes the claims whose finished func reports true. The funcs
// run without the lock: they may ask the reaper about children.
func expire() {
	mu.Lock()
	check := map[int]func() bool{}
	for id, e := range claims {
		if e.finished != nil {
			check[id] = e.finished
		}
	}
	mu.Unlock()
	for id, finished := range check {
		if finished() {
			mu.Lock()
			delete(claims, id)
			mu.Unlock()
		}
	}
}

// sigchld receives SIGCHLD for the whole life of the process once the
// reaper has run: registering and unregistering a handler for every run
// would cost more than the runs.
var sigchld = sync.OnceValue(func() chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGCHLD)
	return ch
})

// loop reaps claimed zombies as SIGCHLDs arrive, while claims exist. It
// lingers for a moment after the last claim goes, so that a supervisor
// running one command after another keeps one goroutine rather than
// starting one per run; it is gone within two lingers of the last claim.
func loop() {
	ch := sigchld()
	idle := time.NewTimer(linger)
	defer idle.Stop()
	// Passes are spaced by passInterval: every run's own exit raises a
	// SIGCHLD, and a pass per exit would cost more than the runs. An orphan
	// that dies mid-run waits at most that long; a run's last orphans are
	// reaped by the run itself before it returns.
	var last time.Time
	var next <-chan time.Time // a pass is due
	for {
		select {
		case <-idle.C:
			mu.Lock()
			if len(claims) == 0 {
				running = false
				mu.Unlock()
				return
			}
			mu.Unlock()
			idle.Reset(linger)
			continue
		case <-ch:
			if next != nil {
				continue // already due
			}
			if wait := passInterval - time.Since(last); wait > 0 {
				next = time.After(wait)
				continue
			}
		case <-next:
			next = nil
		}
		last = time.Now()
		if anyZombie() {
			Reap(nil)
		}
		expire()
	}
}

const linger = 100 * time.Millisecond

const passInterval = time.Second

// anyZombie reports whether this process has a zombie child at all, with
// one waitid that reaps nothing; most SIGCHLDs are runs' own main processes,
// already reaped by their runs when the reaper looks.
func anyZombie() bool {
	var info [128]byte // siginfo_t
	_, _, e := unix.Syscall6(unix.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&info[0])),
		unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, 0, 0)
	if e != 0 {
		return e != unix.ECHILD
	}
	// si_pid (after si_signo, si_errno, si_code and padding) is zero when
	// no child is waitable.
	return *(*int32)(unsafe.Pointer(&info[16])) != 0
}

// Reap reaps every zombie child of this process that extra or a registered
// claim recognises, and returns how many it reaped. Children marked with Own
// are skipped before anything is read about them, so a supervisor with a
// thousand runs in flight pays for its orphans only.
func Reap(extra Claim) int {
	spawnMu.RLock()
	defer spawnMu.RUnlock()
	return reapList(ChildPids(), extra)
}

func reapList(pids []int, extra Claim) int {
	n := 0
	for _, pid := range pids {
		if Owned(pid) {
			continue
		}
		st, err := procfs.ReadStat(pid)
		if err != nil || !st.Zombie() || st.PPid != os.Getpid() {
			continue
		}
		z := &Zombie{Stat: st}
		if !claimed(z, extra) {
			continue
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
			n++
			mu.Lock()
			delete(helpers, pid) // its pid may come back as an orphan's
			mu.Unlock()
		}
	}
	return n
}

func claimed(z *Zombie, extra Claim) bool {
	if extra != nil && extra(z) {
		return true
	}
	mu.Lock()
	list := make([]Claim, 0, len(claims)+1)
	if inherit != nil {
		list = append(list, inherit)
	}
	for _, e := range claims {
		list = append(list, e.claim)
	}
	mu.Unlock()
	for _, c := range list {
		if c(z) {
			return true
		}
	}
	return false
}

// ChildPids returns the pids of the children of this process, live or
// zombie. It reads /proc/self/task/*/children (one list per thread: a child
// is listed under the thread that forked it, and an orphan under the thread
// its tree descends from) where the kernel offers it, and falls back to
// scanning /proc.
func ChildPids() []int {
	if pids, err := childPidsFast(); err == nil {
		return pids
	}
	all, _ := procfs.Scan()
	self := os.Getpid()
	var out []int
	for _, st := range all {
		if st.PPid == self {
			out = append(out, st.Pid)
		}
	}
	return out
}

func childPidsFast() ([]int, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []int
	buf := make([]byte, 0, 4096)
	for _, tid := range tids {
		buf, err = readChildren("/proc/self/task/"+tid+"/children", buf[:0])
		if err != nil {
			if os.IsNotExist(err) {
				continue // the thread exited
			}
			return nil, err
		}
		out = appendPids(out, buf)
	}
	return out, nil
}

// readChildren reads a children list whole into buf, however long: a
// supervisor of ten thousand runs has a list of some 60 kB under one
// thread, and a list cut short would miss an orphan.
func readChildren(path string, buf []byte) ([]byte, error) {
	return procfs.ReadFile(path, buf)
}

func appendPids(out []int, list []byte) []int {
	for _, fl := range bytes.Fields(list) {
		if pid, err := strconv.Atoi(string(fl)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Orphans returns the children listed under this process's main thread
// that are neither owned (Own) nor helpers (Helper). Every orphan handed
// to this process lands there: the kernel gives an orphan to the first
// live thread of the subreaper's thread group, which is the main thread
// while it lives (and a Go program's main thread lives as long as the
// program). Reading that one list costs a fraction of
// reading every thread's. When the list cannot be read it falls back to
// UnownedChildren.
func Orphans() []int {
	list, err := readChildren("/proc/self/task/"+strconv.Itoa(os.Getpid())+"/children", nil)
	if err != nil {
		return UnownedChildren()
	}
	var out []int
	mu.Lock()
	for _, pid := range appendPids(nil, list) {
		_, own := owned[pid]
		_, help := helpers[pid]
		if !own && !help {
			out = append(out, pid)
		}
	}
	mu.Unlock()
	return out
}

// ReapOrphans is Reap over the children Orphans lists: the pass of a run
// whose tree left orphans, which costs what its orphans cost rather than
// a read of every child of a supervisor of thousands of runs. A helper
// that died is left to the passes and sweeps.
func ReapOrphans(extra Claim) int {
	spawnMu.RLock()
	defer spawnMu.RUnlock()
	return reapList(Orphans(), extra)
}

// Helper marks pid as a child of this process that is corral's own
// helper (the cgroup tier's guardian), not an orphan of any run: Orphans
// leaves it out, so that a run's end does not take it for its tree's
// leftover. Reap still takes its zombie when the Inherit claim knows it.
func Helper(pid int) {
	mu.Lock()
	helpers[pid] = struct{}{}
	mu.Unlock()
}

// UnownedChildren returns the children of this process, live or zombie,
// that are not marked with Own.
func UnownedChildren() []int {
	pids := ChildPids()
	out := pids[:0]
	mu.Lock()
	for _, pid := range pids {
		if _, ok := owned[pid]; !ok {
			out = append(out, pid)
		}
	}
	mu.Unlock()
	return out
}
