//go:build !linux

package proc

import (
	"os"
	"time"
)

// ownClock is the wall clock outside Linux: nothing is known of the time
// the scheduler withheld a CPU, so nothing is subtracted (see Timeline).
type ownClock struct{}

// threadsWait is nothing outside Linux.
type threadsWait struct{}

func (c *ownClock) lock()                                  {}
func (c *ownClock) unlock()                                {}
func (c *ownClock) running() bool                          { return false }
func (c *ownClock) poke()                                  {}
func (c *ownClock) sample()                                {}
func (c *ownClock) kernel(fn func())                       { fn() }
func (c *ownClock) nap(time.Duration, *os.File, bool) bool { return false }
func (c *ownClock) threads() threadsWait                   { return threadsWait{} }
func (c *ownClock) since(threadsWait) time.Duration        { return 0 }

func (c *ownClock) event(due time.Time, credit time.Duration) Event {
	now := time.Now()
	ev := Event{At: now}
	if !due.IsZero() && now.After(due) {
		wall := now.Sub(due)
		ev.Starved = min(credit, wall)
		ev.Late = wall - ev.Starved
	}
	return ev
}
