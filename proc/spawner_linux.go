package proc

import (
	"runtime"
	"sync"
)

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
