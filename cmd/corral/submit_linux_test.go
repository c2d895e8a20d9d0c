package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/testutil"
)

// corral submit --wait follows a run through its attempts: the first
// fails, its agent retries it, and the wait ends with the second's
// outcome, saying why the first was retried.
func TestSubmitWaitFollowsTheRunThroughItsAttempts(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	if out, errOut, code := s.cli("agents", "create", "flaky", "--kind", "shell", "--max-attempts", "2", "--retry-on", "exit", "--retry-backoff", "200ms"); code != 0 {
		t.Fatalf("agents create: %d %s %s", code, out, errOut)
	}
	m := filepath.Join(t.TempDir(), "ran-once")
	task := fmt.Sprintf(`if [ -e %[1]s ]; then echo second; else touch %[1]s; echo first; exit 3; fi`, m)
	out, errOut, code := s.cli("submit", "flaky", task, "--wait")
	if code != 0 || out != "second\n" || !strings.Contains(errOut, "attempt 1 failed (exit)") {
		t.Fatalf("submit --wait: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}
}
