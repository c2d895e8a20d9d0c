package riverengine

import (
	"context"
	"sync"
	"time"
)

// localRuns remembers the dispatches this worker ran locally
// (Engine.RunLocal), so that their River jobs end without a second run.
type localRuns struct {
	mu    sync.Mutex
	runs  map[string]*localRun
	swept time.Time
}

type localRun struct {
	started time.Time
	done    chan struct{}
	err     error
}

// forgetAfter is how long a local run is remembered for its River job,
// which is fetched well within it (a poll); a job fetched later, or by
// another worker, finds the execution claimed.
const forgetAfter = 10 * time.Minute

func newLocalRuns() *localRuns { return &localRuns{runs: map[string]*localRun{}} }

// start records a local run of id and returns the function that records
// its end.
func (l *localRuns) start(id string) func(error) {
	now := time.Now()
	r := &localRun{started: now, done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		l.swept = now
		for k, v := range l.runs {
			if now.Sub(v.started) > forgetAfter {
				delete(l.runs, k)
			}
		}
	}
	l.runs[id] = r
	return func(err error) {
		r.err = err
		close(r.done)
	}
}

// wait reports whether id ran locally (done true), once that run ended,
// with its error, and forgets it. A local run that failed (it could not
// claim the execution) returns done false: the River job runs it.
func (l *localRuns) wait(ctx context.Context, id string) (done bool, err error) {
	l.mu.Lock()
	r := l.runs[id]
	delete(l.runs, id)
	l.mu.Unlock()
	if r == nil {
		return false, nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return true, ctx.Err() // River tries the job again later
	}
	return r.err == nil, nil
}
