package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/store/storetest"
)

// fleet is several real corral serve processes sharing one fresh
// PostgreSQL database, each with its own data directory and the same API
// token.
type fleet struct {
	t       *testing.T
	db, tag string
	token   string
	args    []string
	workers []*served
}

func newFleet(t *testing.T, n int, args ...string) *fleet {
	t.Helper()
	f := &fleet{t: t, db: storetest.PostgresURL(t), tag: testutil.Tag(t), args: args}
	var b [16]byte
	rand.Read(b[:])
	f.token = hex.EncodeToString(b[:])
	for i := range n {
		f.start(i, t.TempDir())
	}
	return f
}

// start starts worker wI on data directory dir (again, after a kill).
func (f *fleet) start(i int, dir string) *served {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(f.token+"\n"), 0o600); err != nil {
		f.t.Fatal(err)
	}
	s := startServe(f.t, dir, f.tag, append([]string{"--db", f.db, "--worker-id", fmt.Sprint("w", i)}, f.args...)...)
	if i < len(f.workers) {
		f.workers[i] = s
	} else {
		f.workers = append(f.workers, s)
	}
	return s
}

func (f *fleet) pids() map[int]bool {
	m := map[int]bool{}
	for _, w := range f.workers {
		select {
		case <-w.Exited():
		default:
			m[w.pid()] = true
		}
	}
	return m
}

// runsLeft returns the tagged processes that are not live workers.
func (f *fleet) runsLeft() []string {
	var out []string
	live := f.pids()
	for _, st := range testutil.Tagged(f.tag) {
		if !live[st.Pid] {
			out = append(out, fmt.Sprintf("%d %s", st.Pid, procCmdline(st.Pid)))
		}
	}
	return out
}

// treeRecorded reports whether the worker running e has recorded its
// process tree (the API does not show handles; the worker's run file
// holds it).
func (f *fleet) treeRecorded(e *client.Execution) bool {
	var i int
	if e == nil || e.WorkerID == "" {
		return false
	}
	if _, err := fmt.Sscanf(e.WorkerID, "w%d", &i); err != nil || i >= len(f.workers) {
		return false
	}
	_, err := os.Stat(filepath.Join(f.workers[i].data, "runs", e.ID+".json"))
	return err == nil
}

func (f *fleet) stop() {
	for _, w := range f.workers {
		w.stop()
	}
	testutil.AssertNoTagged(f.t, f.tag, 10*time.Second)
}

// TestFleetThreeWorkersShareCapacityAndNeverOverbook sends 300
// concurrent submissions through three workers to an agent with four
// slots, sampling throughout the running count as the processes see it
// (each run holds a file while it lives) and as the fleet reports it.
func TestFleetThreeWorkersShareCapacityAndNeverOverbook(t *testing.T) {
	f := newFleet(t, 3, "--shutdown-timeout", "0s")
	cs := []*client.Client{f.workers[0].c, f.workers[1].c, f.workers[2].c}
	done := loadCapacity(t, cs, 4, 300, "0.05", 4*time.Minute)
	byWorker := map[string]int{}
	for _, e := range done {
		byWorker[e.WorkerID]++
	}
	t.Logf("runs by worker %v", byWorker)
	if len(byWorker) < 2 {
		t.Fatalf("one worker ran everything: %v", byWorker)
	}
	f.stop()
}

// TestFleetScheduleFiresOncePerTickAcrossAWorkerKill fires a schedule
// every second on three workers and kills one with SIGKILL midway: every
// tick has exactly one execution, none twice, none missed.
func TestFleetScheduleFiresOncePerTickAcrossAWorkerKill(t *testing.T) {
	f := newFleet(t, 3, "--shutdown-timeout", "0s")
	c := f.workers[1].c
	createAgent(t, c, &client.Agent{Name: "tick", MaxParallelTasks: 50})
	sc, err := c.CreateSchedule(bg, &client.Schedule{Agent: "tick", Cron: "* * * * * *", Input: "echo tick", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	fires := func() []*client.Execution {
		list, _, err := c.Executions(bg, client.ListOptions{Agent: "tick", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	testutil.WaitFor(t, 30*time.Second, "three fires", func() bool { return len(fires()) >= 3 })
	victim := f.workers[0]
	if list := fires(); list[0].WorkerID != "" {
		for i, w := range f.workers {
			if fmt.Sprint("w", i) == list[0].WorkerID && i != 1 {
				victim = w // the worker that took the latest fire
			}
		}
	}
	victim.kill9()
	n := len(fires())
	testutil.WaitFor(t, 60*time.Second, "eight more fires after the kill", func() bool { return len(fires()) >= n+8 })
	if _, err := c.UpdateSchedule(bg, "tick", sc.ID, map[string]any{"enabled": false}); err != nil {
		t.Fatal(err)
	}
	list := fires()
	seen := map[time.Time]string{}
	var first, last time.Time
	for _, e := range list {
		if e.FireAt == nil {
			t.Fatalf("execution %s has no fire time", e.ID)
		}
		at := e.FireAt.UTC()
		if other, dup := seen[at]; dup {
			t.Fatalf("fire %s taken twice: %s and %s", at, other, e.ID)
		}
		seen[at] = e.ID
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	ticks := int(last.Sub(first)/time.Second) + 1
	t.Logf("%d executions for %d ticks from %s to %s", len(list), ticks, first.Format(time.TimeOnly), last.Format(time.TimeOnly))
	if len(list) != ticks {
		t.Fatalf("%d executions for %d ticks: a tick was missed", len(list), ticks)
	}
	for _, e := range list {
		waitTerminal(t, c, e.ID, 30*time.Second)
	}
	f.stop()
}

// TestFleetCancelReachesTheWorkerRunningTheTask cancels, through one
// worker, a run owned by another. The run is submitted through w0 for an
// agent whose label only w1 and w2 advertise, so it runs on one of them
// whatever the job engine's luck.
func TestFleetCancelReachesTheWorkerRunningTheTask(t *testing.T) {
	f := newFleet(t, 3, "--shutdown-timeout", "0s")
	f.args = append(f.args, "--labels", "remote")
	for _, i := range []int{1, 2} {
		dir := f.workers[i].data
		f.workers[i].stop()
		f.start(i, dir)
	}
	f.args = f.args[:len(f.args)-2]
	createAgent(t, f.workers[0].c, &client.Agent{Name: "c", MaxParallelTasks: 6, Labels: []string{"remote"}})
	e, err := f.workers[0].c.Submit(bg, "c", "sleep 300 & setsid sleep 300 & sleep 300", 0)
	if err != nil {
		t.Fatal(err)
	}
	var target *client.Execution
	testutil.WaitFor(t, 30*time.Second, "run started", func() bool {
		target, _ = f.workers[0].c.Execution(bg, e.ID)
		return f.treeRecorded(target)
	})
	var owner int
	if _, err := fmt.Sscanf(target.WorkerID, "w%d", &owner); err != nil || owner != 1 && owner != 2 {
		t.Fatalf("run owned by %q, want w1 or w2 (the workers with its label)", target.WorkerID)
	}
	// Through the worker that neither owns the run nor took the
	// submission. (Mutation caught: the owner never polling for cancel
	// requests, so only a cancel through the owner itself would work.)
	via := 3 - owner
	t0 := time.Now()
	if _, err := f.workers[via].c.Cancel(bg, target.ID); err != nil {
		t.Fatal(err)
	}
	done := waitTerminal(t, f.workers[via].c, target.ID, 30*time.Second)
	t.Logf("run on w%d cancelled through w%d, recorded %v later", owner, via, time.Since(t0).Round(time.Millisecond))
	if done.Status != corral.StatusCancelled {
		t.Fatalf("cancelled run: %s %s", done.Status, done.Error)
	}
	f.stop()
}

// TestFleetKill9WorkerIsRecoveredByTheOthersAndRejoins kills a worker
// running three trees (with escapees): the others record its runs as
// interrupted, kill every process of them, free the slots (the queued
// task runs), and the worker restarted with the same id and data
// directory takes work again. Nothing tagged survives.
func TestFleetKill9WorkerIsRecoveredByTheOthersAndRejoins(t *testing.T) {
	// Unguarded: a guarded run's tree is a pid namespace, which dies with
	// its init, and leaves nothing to reclaim.
	f := newFleet(t, 3, "--lease", "3s", "--shutdown-timeout", "0s", "--task-guard", "off")
	c := f.workers[1].c
	createAgent(t, c, &client.Agent{Name: "k", MaxParallelTasks: 3, Overflow: corral.OverflowQueue, Labels: []string{"victim"}})
	// Only w0 advertises the label: restart it with it.
	dir0 := f.workers[0].data
	f.workers[0].stop()
	f.args = append(f.args, "--labels", "victim")
	f.start(0, dir0)
	f.args = f.args[:len(f.args)-2]
	var ids []string
	for i := range 3 {
		e, err := c.Submit(bg, "k", fmt.Sprintf(`echo started-%d; sleep 300 & setsid sleep 300 & (trap "" TERM; sleep 300) & sleep 300`, i), 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	queued, err := c.Submit(bg, "k", "echo after", 0)
	if err != nil || queued.Status != corral.StatusQueued {
		t.Fatalf("queued: %v %v", queued, err)
	}
	testutil.WaitFor(t, 30*time.Second, "three trees running on w0", func() bool {
		for i, id := range ids {
			if e, err := c.Execution(bg, id); err != nil || !f.treeRecorded(e) || e.WorkerID != "w0" {
				return false
			}
			// Lines reach the log in batches (runlog.FlushDelay); what
			// the kill finds unwritten dies with the worker.
			log, err := os.ReadFile(filepath.Join(dir0, "logs", id+".jsonl"))
			if err != nil || !strings.Contains(string(log), fmt.Sprint("started-", i)) {
				return false
			}
		}
		return len(f.runsLeft()) >= 12
	})
	t0 := time.Now()
	// Its runs' trees outlive it (what bound them to it died too), for the
	// others to reclaim.
	f.workers[0].crash()
	for i, id := range ids {
		e := waitTerminal(t, c, id, 30*time.Second)
		if e.Status != corral.StatusInterrupted || e.Reclaimed == 0 || !strings.Contains(e.Stdout, fmt.Sprint("started-", i)) {
			t.Fatalf("run %s after its worker's death: %s reclaimed=%d %q %q", id, e.Status, e.Reclaimed, e.Stdout, e.Error)
		}
	}
	t.Logf("runs of the killed worker interrupted %v after the kill", time.Since(t0).Round(time.Millisecond))
	testutil.WaitFor(t, 10*time.Second, "no process of the dead worker's runs left", func() bool { return len(f.runsLeft()) == 0 })
	// The queued task needs the label: it waits for w0 to come back.
	if e, _ := c.Execution(bg, queued.ID); e.Status.Terminal() {
		t.Fatalf("queued task ended without a worker that has its label: %s", e.Status)
	}
	f.args = append(f.args, "--labels", "victim")
	f.start(0, dir0)
	if e := waitTerminal(t, c, queued.ID, 30*time.Second); e.Status != corral.StatusSucceeded || e.WorkerID != "w0" {
		t.Fatalf("queued task after the restart: %s on %s", e.Status, e.WorkerID)
	}
	if _, slots, _ := c.Slots(bg, "k"); len(slots) != 0 {
		t.Fatalf("slots held: %v", slots)
	}
	f.stop()
}

// TestFleetFrozenWorkerLosesItsLeaseAndIsFenced freezes a worker
// (SIGSTOP: alive, but silent, as behind a network cut): past the lease
// the others record its run as interrupted and kill its tree; thawed, it
// finds its lease lost, keeps nothing running, and serves again.
func TestFleetFrozenWorkerLosesItsLeaseAndIsFenced(t *testing.T) {
	f := newFleet(t, 2, "--lease", "3s", "--shutdown-timeout", "0s")
	c := f.workers[1].c
	createAgent(t, c, &client.Agent{Name: "z", MaxParallelTasks: 4})
	var target *client.Execution
	testutil.WaitFor(t, 60*time.Second, "a run on w0", func() bool {
		e, err := f.workers[0].c.Submit(bg, "z", "echo alive; sleep 300 & sleep 300", 0)
		if err != nil {
			return false
		}
		testutil.WaitFor(t, 30*time.Second, "run started", func() bool {
			target, _ = c.Execution(bg, e.ID)
			return f.treeRecorded(target)
		})
		if target.WorkerID != "w0" {
			c.Cancel(bg, e.ID)
			return false
		}
		return true
	})
	w0 := f.workers[0]
	w0.Cmd.Process.Signal(syscall.SIGSTOP)
	t0 := time.Now()
	e := waitTerminal(t, c, target.ID, 30*time.Second)
	took := time.Since(t0)
	t.Logf("run of the frozen worker interrupted %v after it froze (lease 3s)", took.Round(time.Millisecond))
	if e.Status != corral.StatusInterrupted || took < 2*time.Second {
		t.Fatalf("run of the frozen worker: %s after %v", e.Status, took)
	}
	w0.Cmd.Process.Signal(syscall.SIGCONT)
	testutil.WaitFor(t, 20*time.Second, "w0 ready again", func() bool {
		resp, err := http.Get("http://" + w0.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if left := f.runsLeft(); len(left) != 0 {
		t.Fatalf("processes of the fenced run left: %v", left)
	}
	if e, _ := c.Execution(bg, target.ID); e.Status != corral.StatusInterrupted {
		t.Fatalf("record rewritten after the thaw: %s", e.Status)
	}
	f.stop()
}

// TestFleetRunLongerThanTheLeaseIsNotRedelivered runs a task four times
// as long as the lease: the lease is renewed while it runs, so it runs
// once, on one worker, and succeeds.
func TestFleetRunLongerThanTheLeaseIsNotRedelivered(t *testing.T) {
	f := newFleet(t, 3, "--lease", "2s", "--shutdown-timeout", "0s")
	c := f.workers[0].c
	createAgent(t, c, &client.Agent{Name: "long", MaxParallelTasks: 3})
	marks := filepath.Join(t.TempDir(), "marks")
	e, err := c.Submit(bg, "long", fmt.Sprintf("echo start >> %s; sleep 8; echo end >> %s", marks, marks), 0)
	if err != nil {
		t.Fatal(err)
	}
	e = waitTerminal(t, c, e.ID, 60*time.Second)
	b, _ := os.ReadFile(marks)
	if e.Status != corral.StatusSucceeded || string(b) != "start\nend\n" || e.Attempt != 1 {
		t.Fatalf("long run: %s %q, marks %q", e.Status, e.Error, b)
	}
	all, _, _ := c.Executions(bg, client.ListOptions{Agent: "long"})
	if len(all) != 1 {
		t.Fatalf("%d executions, want 1", len(all))
	}
	f.stop()
}
