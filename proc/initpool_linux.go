package proc

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/shim"
)

// The pool of idle inits. An init whose plain run is over may serve the
// next plain run of the same user, and an init of an enclosure's run the
// next run in that enclosure: starting an init execs this program (or has
// the enclosure's holder fork one, milliseconds either way), handing a run
// to an idle one costs a round trip. Idle inits hold nothing and die with
// this process like any init (an enclosure's with its enclosure, which
// lets go of them as it closes); a few are kept, for a while. The pool is
// the waiter of its inits: a check, armed while any is idle, lets go of
// those idle longer than poolIdle and reaps those that died while idle, so
// none is left a zombie or kept past its time.
const (
	poolMax   = 8                // idle inits kept per user or enclosure
	poolIdle  = 60 * time.Second // an init idle longer is let go
	poolCheck = time.Second      // how often the idle inits are looked at
)

// idleInit is an init that waits for a run.
type idleInit struct {
	ctl    *shim.Conn
	pid    int
	start  uint64
	fd     *os.File // its pidfd; nil when it served a run (see dropInitFD): its socket tells its death
	own    bool     // this process's child, to reap (an enclosure's holder reaps its own)
	since  time.Time
	fresh  bool   // started ahead (initwarm_linux.go): it has served no run
	state  uint64 // inheritedState when it was started
	native bool   // the native init (internal/initelf), not the Go one
}

// unkeep undoes what addIdleLocked kept, before the init serves a run or
// is let go.
func (in *idleInit) unkeep() {
	shim.Unkeep(in.ctl.Fd())
	if in.fd != nil {
		shim.Unkeep(int(in.fd.Fd()))
	}
}

// exited reports, without waiting, whether the idle init has exited: by
// its pidfd, or, once it served a run and holds none here, by its control
// socket, whose other end only the init holds.
func (in *idleInit) exited() bool {
	if in.fd != nil {
		return pidfdExited(in.fd)
	}
	fds := []unix.PollFd{{Fd: int32(in.ctl.Fd()), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err != nil || n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR|unix.POLLNVAL) != 0
}

var pool struct {
	mu       sync.Mutex
	idle     map[string][]*idleInit // by credKey, most recent last
	watching bool                   // the check is armed
}

// credKey names the user an init runs as.
func credKey(c *Credential) string {
	if c == nil {
		return ""
	}
	return fmt.Sprint(c.UID, ":", c.GID, ":", c.Groups)
}

// enclosureKey names the inits of one enclosure's runs (which all run as
// the enclosure's user).
func enclosureKey(e *enclosureImpl) string { return fmt.Sprintf("enclosure:%p", e) }

// shutPool lets go of the idle inits of the enclosure e, and keeps none
// of its runs' from now on: it is closing. (A run still in it that ends
// after has its init let go; e, which the run holds, keeps its address,
// and so its key, from another enclosure's.)
func shutPool(e *enclosureImpl) {
	if mutant.EnclosureIdleKept {
		return
	}
	key := enclosureKey(e)
	pool.mu.Lock()
	e.poolShut = true
	list := pool.idle[key]
	delete(pool.idle, key)
	pool.mu.Unlock()
	letGoAll(list)
}

// takeIdle gives c an idle init of key, if there is one, and says whether
// it was started ahead and has served no run. A plain run's (ownState:
// this process started it) must have been started in the state this
// process is in now (inheritedState), and be of the kind this process
// starts now (native, or the Go init: see nativeInitFor); the idle inits
// of key started in another state or of the other kind are let go, since
// the state they inherited is gone and a run gets the init it would get
// from a start. An enclosure's inits are its holder's, and hold the
// enclosure's state.
func (c *initChild) takeIdle(key string, ownState, native bool) (taken, fresh bool) {
	pool.mu.Lock()
	empty := len(pool.idle[key]) == 0
	pool.mu.Unlock()
	if empty {
		return false, false
	}
	var now uint64
	if ownState {
		now = inheritedState()
	}
	var in *idleInit
	var stale []*idleInit
	pool.mu.Lock()
	list := pool.idle[key]
	for n := len(list); n > 0 && in == nil; n-- {
		if !ownState || list[n-1].state == now && (list[n-1].native == native || mutant.IdleKindBlind) {
			in = list[n-1]
		} else {
			stale = append(stale, list[n-1])
		}
		list = list[:n-1]
	}
	if len(list) > 0 {
		pool.idle[key] = list
	} else {
		delete(pool.idle, key)
	}
	pool.mu.Unlock()
	letGoAll(stale)
	if in == nil {
		return false, false
	}
	in.unkeep()
	c.ctl, c.init, c.initStart, c.initFD, c.ownInit, c.state, c.native = in.ctl, in.pid, in.start, in.fd, in.own, in.state, in.native
	return true, in.fresh
}

// putIdle keeps c's init for another run, or reports false when the pool
// is full.
func (c *initChild) putIdle() bool {
	now := time.Now()
	pool.mu.Lock()
	if pool.idle == nil {
		pool.idle = map[string][]*idleInit{}
	}
	list, stale := spoiled(pool.idle[c.poolKey], now)
	ok := len(list) < poolMax && (c.encl == nil || !c.encl.impl.poolShut)
	if ok {
		list = addIdleLocked(list, &idleInit{ctl: c.ctl, pid: c.init, start: c.initStart, fd: c.initFD, own: c.ownInit, since: now, state: c.state, native: c.native})
	}
	if len(list) > 0 {
		pool.idle[c.poolKey] = list
	} else {
		delete(pool.idle, c.poolKey)
	}
	pool.mu.Unlock()
	letGoAll(stale)
	return ok
}

// keepIdle puts in, an init started ahead, in the pool of key, or reports
// false when the pool is full.
func keepIdle(key string, in *idleInit) bool {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.idle == nil {
		pool.idle = map[string][]*idleInit{}
	}
	if len(pool.idle[key]) >= poolMax {
		return false
	}
	pool.idle[key] = addIdleLocked(pool.idle[key], in)
	return true
}

// addIdleLocked appends in to list, keeps its descriptors and arms the
// pool's check; pool.mu is held.
func addIdleLocked(list []*idleInit, in *idleInit) []*idleInit {
	shim.Keep(in.ctl.Fd())
	if in.fd != nil {
		shim.Keep(int(in.fd.Fd()))
	}
	if !pool.watching {
		pool.watching = true
		time.AfterFunc(poolCheck, checkPool)
	}
	return append(list, in)
}

// spoiled splits list into the inits still fit to serve and those idle
// longer than poolIdle or dead.
func spoiled(list []*idleInit, now time.Time) (fit, out []*idleInit) {
	fit = list[:0:0]
	for _, in := range list {
		if now.Sub(in.since) > poolIdle || in.exited() {
			out = append(out, in)
		} else {
			fit = append(fit, in)
		}
	}
	return fit, out
}

// checkPool lets go of the idle inits that are spoiled, and re-arms itself
// while any init is idle.
func checkPool() {
	now := time.Now()
	var out []*idleInit
	pool.mu.Lock()
	n := 0
	for key, list := range pool.idle {
		fit, spoilt := spoiled(list, now)
		out = append(out, spoilt...)
		if len(fit) == 0 {
			delete(pool.idle, key)
		} else {
			pool.idle[key] = fit
		}
		n += len(fit)
	}
	pool.watching = n > 0
	if pool.watching {
		time.AfterFunc(poolCheck, checkPool)
	}
	pool.mu.Unlock()
	letGoAll(out)
}

// letGoAll tells idle inits taken out of the pool to exit, and reaps them.
func letGoAll(list []*idleInit) {
	for _, in := range list {
		in.unkeep()
		old := &initChild{ctl: in.ctl, init: in.pid, initStart: in.start, initFD: in.fd, ownInit: in.own, reader: closedChan}
		old.letGo()
	}
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
