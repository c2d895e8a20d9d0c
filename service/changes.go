package service

import "sync"

// changes counts the changes this worker made to what the service shows
// (executions started, ended, submitted or cancelled; agents and
// schedules edited), for views that recompute only when something
// changed.
type changes struct {
	mu  sync.Mutex
	seq uint64
	ch  chan struct{}
}

// changed records a change and wakes whoever waits for one.
func (s *Service) changed() {
	c := &s.chg
	c.mu.Lock()
	c.seq++
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

// Changes returns the number of changes this worker has made so far, and
// a channel closed at the next one. A view that shows what it computed
// at seq is current while Changes still returns seq, for what this worker
// changed; other workers of a fleet change the database too, so such a
// view recomputes now and then anyway.
func (s *Service) Changes() (seq uint64, next <-chan struct{}) {
	c := &s.chg
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq, c.ch
}
