package shell

import (
	"context"
	"sync"
)

// fifo is a lock granted in the order it was asked for, which a
// sync.Mutex does not promise: the commands of a session run in the order
// they came.
type fifo struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
}

// lock takes the lock, after everyone who asked before; it gives up with
// ctx's error when ctx ends first.
func (f *fifo) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.held {
		f.held = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	for i, w := range f.waiters {
		if w == ch {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			f.mu.Unlock()
			return ctx.Err()
		}
	}
	f.mu.Unlock()
	f.unlock() // handed over as ctx ended: pass it on
	return ctx.Err()
}

// unlock hands the lock to the longest waiter, if any.
func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) > 0 {
		close(f.waiters[0])
		f.waiters = f.waiters[1:]
		return
	}
	f.held = false
}
