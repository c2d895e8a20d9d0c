package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/store/storetest"
)

// eachDatabase runs fn against corral serve on SQLite and, when one is
// given, on a fresh PostgreSQL database; dbArgs are the serve flags that
// pick it.
func eachDatabase(t *testing.T, fn func(t *testing.T, dbArgs []string)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); fn(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, []string{"--db", storetest.PostgresURL(t)})
	})
}

// startedRun submits input to agent and waits until its first line is in
// its log (the run is going).
func startedRun(t *testing.T, s *served, agent, input, line string) *client.Execution {
	t.Helper()
	e, err := s.c.Submit(bg, agent, input, 0)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, "run "+e.ID+" printed "+line, func() bool {
		stdout, _, _ := s.cli("logs", e.ID)
		return strings.Contains(stdout, line)
	})
	return e
}

// readyStatus returns the HTTP status of s's /readyz, 0 when it does not
// answer.
func readyStatus(s *served) int {
	resp, err := http.Get("http://" + s.addr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeDrainsOnSIGTERMWithTheDefaultTimeout: a deploy's SIGTERM lets
// a run in flight finish (succeeded, its output whole) while the service
// reports draining and takes no new work, and the service exits right
// after it, long before the 30 s default.
func TestServeDrainsOnSIGTERMWithTheDefaultTimeout(t *testing.T) {
	eachDatabase(t, func(t *testing.T, dbArgs []string) {
		tag := testutil.Tag(t)
		data := t.TempDir()
		s := startServe(t, data, tag, dbArgs...)
		createAgent(t, s.c, &client.Agent{Name: "d", MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
		e := startedRun(t, s, "d", "echo begun; sleep 4; echo finished-normally", "begun")
		signalled := time.Now()
		s.Cmd.Process.Signal(syscall.SIGTERM)
		testutil.WaitFor(t, 10*time.Second, "readyz to report draining", func() bool { return readyStatus(s) == http.StatusServiceUnavailable })
		if _, err := s.c.Submit(bg, "d", "echo too-late", 0); err == nil {
			t.Fatal("a draining worker took new work")
		}
		select {
		case <-s.Exited():
		case <-time.After(25 * time.Second):
			t.Fatalf("the service did not exit within 25 s of SIGTERM, its run being 4 s long:\n%s", s.log())
		}
		took := time.Since(signalled)
		s2 := startServe(t, data, tag, dbArgs...)
		got := waitTerminal(t, s2.c, e.ID, 10*time.Second)
		t.Logf("exited %v after SIGTERM; run %s %q", took.Round(time.Millisecond), got.Status, got.Error)
		if got.Status != corral.StatusSucceeded || !strings.Contains(got.Stdout, "finished-normally") {
			t.Fatalf("a run that finished during the drain: %s %s %q, stdout %q", got.Status, got.ErrorType, got.Error, got.Stdout)
		}
		s2.stop()
		testutil.AssertNoTagged(t, tag, 10*time.Second)
	})
}

// TestServeInterruptsWhatOutlivesTheDrainAndSaysWhy: with the default
// 30 s timeout, a run that outlives the drain is torn down and recorded
// interrupted with a reason that names the shutdown; nothing of it is
// left.
func TestServeInterruptsWhatOutlivesTheDrainAndSaysWhy(t *testing.T) {
	eachDatabase(t, func(t *testing.T, dbArgs []string) {
		tag := testutil.Tag(t)
		data := t.TempDir()
		s := startServe(t, data, tag, dbArgs...)
		createAgent(t, s.c, &client.Agent{Name: "d", MaxParallelTasks: 2})
		e := startedRun(t, s, "d", "echo begun; sleep 300 & setsid sleep 300 & sleep 300", "begun")
		signalled := time.Now()
		s.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.Exited():
		case <-time.After(90 * time.Second):
			t.Fatalf("the service did not exit within 90 s of SIGTERM:\n%s", s.log())
		}
		took := time.Since(signalled)
		if took < 29*time.Second {
			t.Fatalf("exited %v after SIGTERM: the run was cut before the 30 s drain", took)
		}
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		s2 := startServe(t, data, tag, dbArgs...)
		got := waitTerminal(t, s2.c, e.ID, 10*time.Second)
		t.Logf("exited %v after SIGTERM; run %s %q", took.Round(time.Millisecond), got.Status, got.Error)
		if got.Status != corral.StatusInterrupted || !strings.Contains(got.Error, "shut down") || !strings.Contains(got.Error, "30s") {
			t.Fatalf("a run that outlived the drain: %s %q", got.Status, got.Error)
		}
		s2.stop()
	})
}

// TestServeSecondSIGTERMStopsTheRunsAtOnce: a second signal during the
// drain interrupts the runs in flight at once and the service exits.
func TestServeSecondSIGTERMStopsTheRunsAtOnce(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	s := startServe(t, data, tag)
	createAgent(t, s.c, &client.Agent{Name: "d", MaxParallelTasks: 2})
	e := startedRun(t, s, "d", "echo begun; sleep 300", "begun")
	s.Cmd.Process.Signal(syscall.SIGTERM)
	testutil.WaitFor(t, 10*time.Second, "readyz to report draining", func() bool { return readyStatus(s) == http.StatusServiceUnavailable })
	again := time.Now()
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Exited():
	case <-time.After(20 * time.Second):
		t.Fatalf("the service did not exit within 20 s of a second SIGTERM:\n%s", s.log())
	}
	t.Logf("exited %v after the second SIGTERM", time.Since(again).Round(time.Millisecond))
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	s2 := startServe(t, data, tag)
	got := waitTerminal(t, s2.c, e.ID, 10*time.Second)
	if got.Status != corral.StatusInterrupted || !strings.Contains(got.Error, "second") {
		t.Fatalf("run stopped by a second SIGTERM: %s %q", got.Status, got.Error)
	}
	s2.stop()
}

// TestFleetRollingRestartLosesAndDuplicatesNothing restarts the three
// workers of a PostgreSQL fleet one after another, each with SIGTERM and
// the default drain, each while it runs tasks, as a client submits tasks
// of a second or two at a steady rate
// to whichever worker answers: every task admitted runs exactly once (it
// appends its token to a file) and succeeds; none is interrupted.
func TestFleetRollingRestartLosesAndDuplicatesNothing(t *testing.T) {
	f := newFleet(t, 3)
	createAgent(t, f.workers[0].c, &client.Agent{Name: "roll", MaxParallelTasks: 6, Overflow: corral.OverflowQueue, MaxBacklog: 5000})
	out := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(out, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards ids and clients
	var ids []string
	clients := []*client.Client{f.workers[0].c, f.workers[1].c, f.workers[2].c}
	var refused atomic.Int64
	stop := make(chan struct{})
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			input := fmt.Sprintf("sleep 1.%d; echo tok-%d >> %s", rand.IntN(10), n, out)
			for try := 0; try < 30; try++ {
				mu.Lock()
				c := clients[rand.IntN(len(clients))]
				mu.Unlock()
				e, err := c.Submit(bg, "roll", input, 0)
				if err == nil {
					mu.Lock()
					ids = append(ids, e.ID)
					mu.Unlock()
					break
				}
				refused.Add(1) // a worker draining or restarting: the next one takes it
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	for i := range f.workers {
		testutil.WaitFor(t, 30*time.Second, "load before the restart", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(ids) >= 20*(i+1)
		})
		w := f.workers[i]
		testutil.WaitFor(t, 30*time.Second, fmt.Sprintf("w%d running a task", i), func() bool {
			list, _, err := f.workers[(i+1)%len(f.workers)].c.Executions(bg, client.ListOptions{Agent: "roll", Statuses: []corral.Status{corral.StatusRunning}})
			for _, e := range list {
				if err == nil && e.WorkerID == fmt.Sprint("w", i) && e.StartedAt != nil {
					return true
				}
			}
			return false
		})
		w.stop()
		restarted := f.start(i, w.data)
		mu.Lock()
		clients[i] = restarted.c
		mu.Unlock()
	}
	time.Sleep(2 * time.Second) // load on the restarted fleet too
	close(stop)
	<-loaded
	mu.Lock()
	defer mu.Unlock()
	statuses := map[corral.Status]int{}
	for _, id := range ids {
		e := waitTerminal(t, f.workers[0].c, id, 2*time.Minute)
		statuses[e.Status]++
		if e.Status != corral.StatusSucceeded {
			t.Errorf("execution %s: %s %s %q", id, e.Status, e.ErrorType, e.Error)
		}
	}
	b, _ := os.ReadFile(out)
	ran := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		ran[l]++
	}
	t.Logf("%d tasks admitted (%d submissions refused by draining or restarting workers, then taken by another): %v; %d tokens written", len(ids), refused.Load(), statuses, len(ran))
	if len(ran) != len(ids) {
		t.Errorf("%d tasks admitted, %d ran", len(ids), len(ran))
	}
	for tok, n := range ran {
		if n != 1 {
			t.Errorf("%s ran %d times", tok, n)
		}
	}
	f.stop()
}
