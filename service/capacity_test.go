package service_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/storetest"
)

// lockedBuffer is a log sink safe for the service's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStartWarnsWhenMaxRunsExceedsTheOpenFileLimit proves that a worker
// asked to run more executions at once than its descriptors allow says
// so as it starts, naming the limit; one within them says nothing.
func TestStartWarnsWhenMaxRunsExceedsTheOpenFileLimit(t *testing.T) {
	soft, _, err := proc.RaiseOpenFileLimit()
	if err != nil {
		t.Skip(err)
	}
	// Four descriptors a run at least, whatever the tier (three of the
	// run's, its log file); the job engine runs 10,000 at most.
	n := 10000
	if soft >= 4*uint64(n) {
		t.Skipf("RLIMIT_NOFILE %d may hold the job engine's most runs at once, 10,000", soft)
	}
	b := storetest.Backends()[0]
	var log lockedBuffer
	newFixture(t, b, service.Config{MaxRuns: n, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if out := log.String(); !strings.Contains(out, "cannot hold max_runs") || !strings.Contains(out, "RLIMIT_NOFILE") {
		t.Errorf("MaxRuns %d, RLIMIT_NOFILE %d: log %q, want a warning naming RLIMIT_NOFILE", n, soft, out)
	}
	var quiet lockedBuffer
	newFixture(t, b, service.Config{MaxRuns: 10, Logger: slog.New(slog.NewTextHandler(&quiet, nil))})
	if strings.Contains(quiet.String(), "cannot hold") {
		t.Errorf("MaxRuns 10: %q", quiet.String())
	}
}

// TestStartCountsWhatAGuardedRunHolds proves that the warning counts
// what this worker's runs hold: a number of runs that fits unguarded
// (three descriptors each: the log is not held open) warns when the task
// guard is on (an init's socket besides: four each).
func TestStartCountsWhatAGuardedRunHolds(t *testing.T) {
	soft, _, err := proc.RaiseOpenFileLimit()
	if err != nil {
		t.Skip(err)
	}
	if perr := proc.ProbeGuard(); perr != nil {
		t.Skipf("the task guard cannot be built here: %v", perr)
	}
	n := int(soft * 2 / 7) // 3.5 descriptors each
	if n > 10000 || n < 10 {
		t.Skipf("RLIMIT_NOFILE %d: %d runs is past the job engine's 10,000 or too few to tell", soft, n)
	}
	b := storetest.Backends()[0]
	for _, c := range []struct {
		guard service.GuardMode
		warns bool
	}{{service.GuardOff, false}, {service.GuardOn, true}} {
		var log lockedBuffer
		newFixture(t, b, service.Config{MaxRuns: n, Guard: c.guard, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if got := strings.Contains(log.String(), "cannot hold max_runs"); got != c.warns {
			t.Errorf("task guard %s, MaxRuns %d, RLIMIT_NOFILE %d: warned %v, want %v: %q", c.guard, n, soft, got, c.warns, log.String())
		}
	}
}
