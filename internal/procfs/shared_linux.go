package procfs

import (
	"sync"
	"time"
)

// A scan of /proc costs a read per process; a supervisor with hundreds of
// runs ending at once would repeat it hundreds of times. ScanSince lets them
// share one.
var shared struct {
	mu       sync.Mutex
	last     *scanCall // the newest finished scan
	inflight *scanCall
}

type scanCall struct {
	began time.Time
	done  chan struct{}
	stats []Stat
	err   error
}

// ScanSince returns a scan of every process that began no earlier than
// since, so that it sees every process that existed at that moment and is
// still alive. Concurrent callers share scans: one that began after since,
// finished or in flight, is reused. The returned slice is shared and must not
// be modified.
func ScanSince(since time.Time) ([]Stat, error) {
	shared.mu.Lock()
	for {
		if c := shared.last; c != nil && !c.began.Before(since) {
			shared.mu.Unlock()
			return c.stats, c.err
		}
		c := shared.inflight
		if c == nil {
			break
		}
		// Join a scan that began late enough; otherwise wait for the one
		// in flight to end, and join or start the next, with the others
		// who arrived meanwhile.
		shared.mu.Unlock()
		<-c.done
		if !c.began.Before(since) {
			return c.stats, c.err
		}
		shared.mu.Lock()
	}
	c := &scanCall{began: time.Now(), done: make(chan struct{})}
	shared.inflight = c
	shared.mu.Unlock()

	c.stats, c.err = Scan()

	shared.mu.Lock()
	shared.inflight = nil
	shared.last = c
	shared.mu.Unlock()
	close(c.done)
	return c.stats, c.err
}
