package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
)

// secondTimeLucky is a task that hangs the first time it runs and
// succeeds the next: the marker file says which time it is.
func secondTimeLucky(dir string) string {
	m := filepath.Join(dir, "ran-once")
	return fmt.Sprintf(`if [ -e %[1]s ]; then echo second-attempt; else touch %[1]s; echo first-attempt; sleep 300; fi`, m)
}

// TestKill9OfTheWorkerRetriesTheRunOnce: a worker running a task is
// SIGKILLed; the next start (SQLite) or the fleet's other workers
// (PostgreSQL) record the run interrupted and its agent's policy retries
// it, exactly once, and the retry succeeds as attempt 2 linked to 1.
func TestKill9OfTheWorkerRetriesTheRunOnce(t *testing.T) {
	policy := corral.Retry{MaxAttempts: 2, RetryBackoff: corral.Duration(time.Second)}
	check := func(t *testing.T, c *client.Client, first string) {
		one := waitTerminal(t, c, first, 2*time.Minute)
		if one.Status != corral.StatusInterrupted || one.RetriedBy == "" {
			t.Fatalf("attempt 1: %s %q, retried by %q", one.Status, one.Error, one.RetriedBy)
		}
		two := waitTerminal(t, c, one.RetriedBy, time.Minute)
		if two.Status != corral.StatusSucceeded || two.Attempt != 2 || two.RetryOf != one.ID || !strings.Contains(two.Stdout, "second-attempt") {
			t.Fatalf("attempt 2: %s attempt %d retry of %q: %q %q", two.Status, two.Attempt, two.RetryOf, two.Error, two.Stdout)
		}
		list, _, err := c.Executions(bg, client.ListOptions{Agent: "lucky"})
		if err != nil || len(list) != 2 {
			t.Fatalf("%d executions (%v), want the run's two attempts", len(list), err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		tag := testutil.Tag(t)
		data := t.TempDir()
		s := startServe(t, data, tag)
		createAgent(t, s.c, &client.Agent{Name: "lucky", MaxParallelTasks: 2, Retry: policy})
		e := startedRun(t, s, "lucky", secondTimeLucky(t.TempDir()), "first-attempt")
		s.kill9()
		s2 := startServe(t, data, tag)
		check(t, s2.c, e.ID)
		s2.stop()
		testutil.AssertNoTagged(t, tag, 10*time.Second)
	})
	t.Run("postgres-fleet", func(t *testing.T) {
		f := newFleet(t, 3, "--lease", "3s", "--shutdown-timeout", "0s")
		c := f.workers[0].c
		createAgent(t, c, &client.Agent{Name: "lucky", MaxParallelTasks: 2, Retry: policy})
		e, err := c.Submit(bg, "lucky", secondTimeLucky(t.TempDir()), 0)
		if err != nil {
			t.Fatal(err)
		}
		var owner *served
		testutil.WaitFor(t, 30*time.Second, "the run started", func() bool {
			got, _ := c.Execution(bg, e.ID)
			if got == nil || got.WorkerID == "" || got.StartedAt == nil {
				return false
			}
			for i, w := range f.workers {
				if got.WorkerID == fmt.Sprint("w", i) {
					owner = w
				}
			}
			return owner != nil
		})
		testutil.WaitFor(t, 30*time.Second, "its first line logged", func() bool {
			out, _, _ := owner.cli("logs", e.ID)
			return strings.Contains(out, "first-attempt")
		})
		owner.kill9()
		for _, w := range f.workers {
			if w != owner {
				c = w.c
			}
		}
		check(t, c, e.ID)
		f.stop()
	})
}
