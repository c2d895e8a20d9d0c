package shell

import (
	"context"
	"sync"
)

// inflight tracks the commands running now, so that Close can stop them
// and wait for their process trees to be gone.
type inflight struct {
	mu     sync.Mutex
	next   int
	cancel map[int]context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// begin returns a context that Close cancels, and the function to call
// when the command is over; ok is false once Close has been called.
func (f *inflight) begin(ctx context.Context) (context.Context, func(), bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, nil, false
	}
	if f.cancel == nil {
		f.cancel = map[int]context.CancelFunc{}
	}
	ctx, cancel := context.WithCancel(ctx)
	id := f.next
	f.next++
	f.cancel[id] = cancel
	f.wg.Add(1)
	return ctx, func() {
		f.mu.Lock()
		delete(f.cancel, id)
		f.mu.Unlock()
		cancel()
		f.wg.Done()
	}, true
}

// close cancels every command and waits for them to return.
func (f *inflight) close() {
	f.mu.Lock()
	f.closed = true
	for _, c := range f.cancel {
		c()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
