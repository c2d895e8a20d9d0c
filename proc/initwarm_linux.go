package proc

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/shim"
)

// Inits started ahead. A plain run of the subreaper or process-group tier
// that finds no idle init starts one and waits for it: an exec of a Go
// program, 1–3 ms before it answers, most of the start's latency. A
// supervisor that starts many such runs one after another (a service's
// burst, a harness's fan-out) would wait that long for each while its
// cores idle. So a second start that finds no idle init within warmWindow
// of the first (a burst, not a lone command) has inits started ahead, in
// the background, until warmDepth are idle; and a run that takes one of
// those and leaves fewer has them made up, so that the next start finds
// one idle, up and answering. A supervisor that runs one command after
// another takes an idle init and gives it back: the pool stays full and
// nothing is started ahead that would only push the returning init out.
// When the starts stop, so does this: what is left are idle inits, let go
// after poolIdle like any (they hold nothing and die with this process). A
// program that starts one run (the corral CLI) starts nothing ahead.
const warmWindow = time.Second

// warmDepth is how many inits a burst keeps idle or starting: two a CPU
// (more only start at once and compete for the cores, so that the run
// that takes one waits longer for it to answer), at most the pool's.
var warmDepth = min(2*runtime.NumCPU(), poolMax)

var errNoPidfd = errors.New("starting an init ahead: the kernel gave no pidfd")

var warm struct {
	mu       sync.Mutex
	lastCold map[string]time.Time // the last start that found no idle init, by credKey
	want     map[string]int       // inits still to start ahead, by credKey
	running  map[string]bool      // a starter works for the key

	started atomic.Int64 // inits started ahead
	taken   atomic.Int64 // runs that took one
}

// noteCold records a plain run's start that found no idle init of key,
// and starts inits ahead when it is part of a burst.
func noteCold(key string, cred *Credential) {
	if mutant.PrestartOff {
		return
	}
	now := time.Now()
	warm.mu.Lock()
	if warm.lastCold == nil {
		warm.lastCold = map[string]time.Time{}
	}
	last, seen := warm.lastCold[key]
	warm.lastCold[key] = now
	warm.mu.Unlock()
	if mutant.PrestartLone || (seen && now.Sub(last) < warmWindow) {
		warmUp(key, cred, warmDepth)
	}
}

// tookWarm records a run that took an init started ahead and, when that
// left fewer than warmDepth idle, has them made up: the burst goes on. (A
// supervisor that runs one command after another takes an idle init and
// gives it back; the pool stays as full, and nothing is started ahead that
// would only push the returning init out.)
func tookWarm(key string, cred *Credential) {
	warm.taken.Add(1)
	pool.mu.Lock()
	idle := len(pool.idle[key])
	pool.mu.Unlock()
	if idle < warmDepth || mutant.PrestartChurn {
		warmUp(key, cred, max(warmDepth-idle, 1))
	}
}

// warmUp asks for n more inits of key to be started ahead (up to what the
// pool holds), by the key's starter, started if none works.
func warmUp(key string, cred *Credential, n int) {
	warm.mu.Lock()
	defer warm.mu.Unlock()
	if warm.want == nil {
		warm.want, warm.running = map[string]int{}, map[string]bool{}
	}
	warm.want[key] = min(warm.want[key]+n, poolMax)
	if warm.running[key] {
		return
	}
	warm.running[key] = true
	var own *Credential
	if cred != nil {
		c := *cred
		own = &c
	}
	go warmStarter(key, own)
}

// warmStarter starts the inits asked for key, one after another, and puts
// each in the pool; it ends when none is wanted, the pool is full or an
// init cannot be started.
func warmStarter(key string, cred *Credential) {
	for {
		warm.mu.Lock()
		pool.mu.Lock()
		full := len(pool.idle[key]) >= poolMax
		pool.mu.Unlock()
		if warm.want[key] <= 0 || full {
			delete(warm.want, key)
			delete(warm.running, key)
			warm.mu.Unlock()
			return
		}
		warm.want[key]--
		warm.mu.Unlock()
		in, err := startAhead(cred)
		if err != nil {
			warm.mu.Lock()
			delete(warm.want, key)
			delete(warm.running, key)
			warm.mu.Unlock()
			return
		}
		warm.started.Add(1)
		if !keepIdle(key, in) {
			letGoAll([]*idleInit{in})
		}
	}
}

// startAhead starts an init of the user cred that has not served a run.
func startAhead(cred *Credential) (*idleInit, error) {
	ctl, shimEnd, err := shim.Pair()
	if err != nil {
		return nil, err
	}
	// Kept from the first: the pool's, not a run's.
	shim.Keep(ctl.Fd())
	c := &initChild{ctl: ctl}
	err = c.forkInit(&spawnAttr{cred: cred}, initAttr{}, shimEnd)
	shimEnd.Close()
	if err == nil && c.initFD == nil {
		shim.Unkeep(ctl.Fd())
		c.abandonInit() // without its pidfd the pool cannot tell it died
		return nil, errNoPidfd
	}
	if err != nil {
		shim.Unkeep(ctl.Fd())
		ctl.Close()
		return nil, err
	}
	shim.Keep(int(c.initFD.Fd()))
	return &idleInit{ctl: ctl, pid: c.init, start: c.initStart, fd: c.initFD, own: true, since: time.Now(), fresh: true, state: c.state, native: c.native}, nil
}
