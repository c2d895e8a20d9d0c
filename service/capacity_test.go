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
	// Three descriptors a run at least, whatever the tier; the job engine
	// runs 10,000 at most.
	n := 10000
	if soft >= 3*uint64(n) {
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
