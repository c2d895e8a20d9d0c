package proc

import (
	"context"
	"fmt"

	"github.com/corralrun/corral/internal/mutant"
)

// startsAtOnce bounds the Starts between their first descriptor and the
// child's start. A start holds more descriptors than its run will (the
// child's ends of its pipes, a cgroup leaf's directory, an init's end of
// its socket), and the starts themselves go one a thread; without the
// bound, a burst of thousands of Starts made all of their descriptors
// first and then waited for a thread: 4,000 live runs of a service and
// the burst behind them hit an RLIMIT_NOFILE of 20,000 that the runs
// alone (four descriptors each) fit. A Start past the bound waits here
// holding nothing.
const startsAtOnce = 64

var startGate = make(chan struct{}, startsAtOnce)

// enterStart waits for a place among the Starts in flight, or for ctx
// to end; the returned func gives the place back.
func enterStart(ctx context.Context) (release func(), err error) {
	if mutant.StartUngated {
		return func() {}, nil
	}
	select {
	case startGate <- struct{}{}:
		return func() { <-startGate }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("proc: not started: %w", ctx.Err())
	}
}
