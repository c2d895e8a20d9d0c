package proc

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
)

// cgroupTree holds a run in a cgroup v2 leaf of its own. Membership is the
// kernel's, so nothing can leave it.
type cgroupTree struct {
	leaf *cgroup.Leaf
	main int

	// detachNote says why detached processes stay in this process's
	// cgroup directory, where its guardian kills them when it goes.
	detachNote string
}

func (t *cgroupTree) members() []procKey {
	pids, _ := t.leaf.Procs()
	keys := make([]procKey, len(pids))
	for i, pid := range pids {
		keys[i] = procKey{pid: pid}
	}
	return keys
}

func (t *cgroupTree) signalMember(k procKey, sigs ...unix.Signal) error {
	return t.leaf.SignalMember(k.pid, sigs...)
}

func (t *cgroupTree) kill() []procKey {
	keys := t.members()
	if err := t.leaf.Kill(); err != nil {
		// cgroup.kill refused (it never should): kill member by member.
		for _, k := range keys {
			t.leaf.SignalMember(k.pid, unix.SIGKILL)
		}
	}
	return keys
}

func (t *cgroupTree) claim(z *reaper.Zombie) bool {
	return z.Pid != t.main && z.Cgroup() == t.leaf.Rel()
}

func (t *cgroupTree) release(detach bool) func() bool {
	if detach {
		if pop, err := t.leaf.Populated(); err == nil && pop {
			if err := moveOut(t.leaf); err != nil {
				t.detachNote = err.Error() + ": they end with this process"
			}
			return func() bool {
				if pop, err := t.leaf.Populated(); err == nil && pop {
					return false
				}
				t.leaf.Close()
				return true
			}
		}
	}
	t.leaf.Close()
	return nil
}

func (t *cgroupTree) cgroupPath() string { return t.leaf.Path }

// pgroupTree holds a run in a process group led by its main process. The
// group id cannot be recycled while the main process is unreaped, and a
// signal to a group reaches every member atomically with respect to fork.
type pgroupTree struct {
	pgid int
	main int
}

func (t *pgroupTree) members() []procKey {
	all, _ := procfs.ScanSince(time.Now())
	var out []procKey
	for _, st := range all {
		if st.Pgid == t.pgid && !st.Zombie() {
			out = append(out, procKey{pid: st.Pid, start: st.Start})
		}
	}
	return out
}

func (t *pgroupTree) signalGroup(sig unix.Signal) { unix.Kill(-t.pgid, sig) }

func (t *pgroupTree) signalMember(k procKey, sigs ...unix.Signal) error {
	return procfs.Signal(k.pid, k.start, sigs...)
}

func (t *pgroupTree) kill() []procKey {
	keys := t.members()
	t.signalGroup(unix.SIGKILL)
	return keys
}

func (t *pgroupTree) claim(z *reaper.Zombie) bool { return z.Pgid == t.pgid && z.Pid != t.main }

func (t *pgroupTree) release(bool) func() bool { return nil }

func (t *pgroupTree) cgroupPath() string { return "" }

// reapTree holds a run by lineage while this process is a child subreaper:
// every orphan of the tree is reparented to us, so the tree can always be
// found through /proc. A process belongs to the run when it is in the run's
// session, in a process group a member led, a child of a member, or one of
// the members seen before (pid and start time). An orphan that broke all of
// these ties (new session, new group, parent gone) is attributed to the run
// when it is the only subreaper run of this process.
type reapTree struct {
	main    int
	startFn func() uint64 // the main process's start time, read when first needed
	start   uint64        // set by ensure

	mu    sync.Mutex
	known map[int]uint64 // pid → start time
	pgids map[int]bool
}

var (
	reapRunsMu sync.Mutex
	reapRuns   = map[*reapTree]struct{}{}
)

func newReapTree(main int, start func() uint64) *reapTree {
	t := &reapTree{
		main:    main,
		startFn: start,
		known:   map[int]uint64{},
		pgids:   map[int]bool{main: true},
	}
	reapRunsMu.Lock()
	reapRuns[t] = struct{}{}
	reapRunsMu.Unlock()
	return t
}

func soleReapRun(t *reapTree) bool {
	reapRunsMu.Lock()
	defer reapRunsMu.Unlock()
	_, ok := reapRuns[t]
	return ok && len(reapRuns) == 1
}

// ensure learns the main process's start time, on the first look at the
// tree: most runs end without anyone needing it. Callers hold t.mu.
func (t *reapTree) ensure() {
	if t.startFn != nil {
		t.start = t.startFn()
		t.known[t.main] = t.start
		t.startFn = nil
	}
}

// belongs decides membership of st given the stats of all processes.
// Callers hold t.mu.
func (t *reapTree) belongs(st procfs.Stat, byPid map[int]procfs.Stat, self int, sole bool) bool {
	if start, ok := t.known[st.Pid]; ok {
		return start == st.Start
	}
	if st.Sid == t.main || t.pgids[st.Pgid] {
		return true
	}
	if start, ok := t.known[st.PPid]; ok {
		if p, live := byPid[st.PPid]; !live || p.Start == start {
			return true
		}
	}
	// Every process of every run lives outside the supervisor's session
	// (runs start in a session of their own, and no process can join an
	// existing session), so a child in our session is not a run's orphan:
	// it is a child that other code in this program started.
	return sole && st.PPid == self && st.Start >= t.start && st.Sid != ownSession() && !reaper.Owned(st.Pid)
}

var ownSession = sync.OnceValue(func() int {
	sid, err := unix.Getsid(0)
	if err != nil {
		return -1
	}
	return sid
})

// settledScan returns the live members of the tree. A scan of /proc is not
// a snapshot: a member may fork after the directory was listed and exit
// before its own entry was read, leaving a child the scan never saw. So an
// empty answer is only trusted when two scans in a row saw the same members
// and all of them dead (a zombie cannot fork).
func (t *reapTree) settledScan() []procfs.Stat {
	var prev map[int]bool
	for i := 0; i < 16; i++ {
		live, dead := t.scan()
		if len(live) > 0 {
			return live
		}
		if prev != nil && sameKeys(prev, dead) {
			return nil
		}
		prev = dead
	}
	return nil
}

func sameKeys(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// scan returns the live members of the tree and the pids of its zombies,
// learning new members.
func (t *reapTree) scan() (live []procfs.Stat, dead map[int]bool) {
	all, _ := procfs.ScanSince(time.Now())
	byPid := make(map[int]procfs.Stat, len(all))
	for _, st := range all {
		byPid[st.Pid] = st
	}
	self := os.Getpid()
	sole := soleReapRun(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ensure()
	// Membership spreads from parent to child; repeat until it settles.
	in := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, st := range all {
			if in[st.Pid] || st.Pid == self {
				continue
			}
			if t.belongs(st, byPid, self, sole) {
				in[st.Pid] = true
				t.known[st.Pid] = st.Start
				t.pgids[st.Pgid] = true
				changed = true
			}
		}
	}
	dead = map[int]bool{}
	for _, st := range all {
		switch {
		case !in[st.Pid]:
		case st.Zombie():
			dead[st.Pid] = true
		default:
			live = append(live, st)
		}
	}
	return live, dead
}

func (t *reapTree) members() []procKey {
	ms := t.settledScan()
	out := make([]procKey, len(ms))
	for i, st := range ms {
		out[i] = procKey{pid: st.Pid, start: st.Start}
	}
	return out
}

func (t *reapTree) signalMember(k procKey, sigs ...unix.Signal) error {
	return procfs.Signal(k.pid, k.start, sigs...)
}

// kill stops the tree with SIGSTOP until a scan finds nothing new running,
// so that no member can fork while it is being killed, then kills them all.
func (t *reapTree) kill() []procKey {
	return keysOf(procfs.FreezeKill(func() []procfs.Stat {
		live, _ := t.scan()
		return live
	}))
}

// keysOf names the processes of list.
func keysOf(list []procfs.Stat) []procKey {
	out := make([]procKey, len(list))
	for i, st := range list {
		out[i] = procKey{pid: st.Pid, start: st.Start}
	}
	return out
}

func (t *reapTree) claim(z *reaper.Zombie) bool {
	if z.Pid == t.main {
		return false
	}
	sole := soleReapRun(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ensure()
	return t.belongs(z.Stat, nil, os.Getpid(), sole)
}

func (t *reapTree) release(detach bool) func() bool {
	done := func() bool {
		if len(t.settledScan()) > 0 {
			return false
		}
		reapRunsMu.Lock()
		delete(reapRuns, t)
		reapRunsMu.Unlock()
		return true
	}
	if detach && !done() {
		return done
	}
	reapRunsMu.Lock()
	delete(reapRuns, t)
	reapRunsMu.Unlock()
	return nil
}

func (t *reapTree) cgroupPath() string { return "" }
