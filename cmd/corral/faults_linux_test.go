package main

import (
	"context"
	"database/sql"
	"errors"
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

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
)

// The fault-injection tests break what corral serve stands on — its disk,
// its database, its log directory, its own process — while tasks run,
// then mend it, and check that nothing is stuck (every execution ends,
// every slot is freed, the service is ready again, without a restart
// unless the fault was one), nothing is lost (every accepted task has
// its record), nothing runs twice, and no agent ever holds more slots
// than it has.

// mountTmpfs mounts a tmpfs of size (such as "16m") for the test and
// unmounts it at its end, after the service stopped.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: this fault-injection test needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs (%v): this fault-injection test needs it", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the file system is full, and returns
// its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// ready reports whether the service answers /readyz with 200.
func (s *served) ready() bool {
	resp, err := http.Get("http://" + s.addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// gate is a file a task waits for: the test opens it when it wants. The
// task says it is waiting with another file.
type gate string

func newGate(t *testing.T) gate { return gate(filepath.Join(t.TempDir(), "open")) }

// wait is the shell that says the task waits, then waits for g.
func (g gate) wait() string {
	return fmt.Sprintf(`touch %s.waiting; while [ ! -e %s ]; do sleep 0.05; done`, g, g)
}

// waiting waits until a task waits at g: it is running.
func (g gate) waiting(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, 30*time.Second, "the run started", func() bool { _, err := os.Stat(string(g) + ".waiting"); return err == nil })
}

func (g gate) open(t *testing.T) {
	if err := os.WriteFile(string(g), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// settled checks that every execution of agent ended and that it holds
// no slot.
func settled(t *testing.T, c *client.Client, agent string, timeout time.Duration) []*client.Execution {
	t.Helper()
	var all []*client.Execution
	testutil.WaitFor(t, timeout, "every execution of "+agent+" ended and its slots free", func() bool {
		all = all[:0]
		cursor := ""
		for {
			list, next, err := c.Executions(bg, client.ListOptions{Agent: agent, Limit: 1000, Cursor: cursor})
			if err != nil {
				return false
			}
			all = append(all, list...)
			if next == "" {
				break
			}
			cursor = next
		}
		for _, e := range all {
			if !e.Status.Terminal() {
				return false
			}
		}
		_, slots, err := c.Slots(bg, agent)
		return err == nil && len(slots) == 0
	})
	return all
}

// TestFaultDiskFull fills the disk under the data directory while a run
// prints: its log loses what it cannot write, says so and resumes once
// space returns; the run is recorded and its slot freed, the queue moves
// and the service is ready again, without a restart.
func TestFaultDiskFull(t *testing.T) {
	tag := testutil.Tag(t)
	data := filepath.Join(mountTmpfs(t, "24m"), "corral")
	s := startServe(t, data, tag)
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	burst, mended := newGate(t), newGate(t)
	burstDone := filepath.Join(t.TempDir(), "burst-done")
	a, err := s.c.Submit(bg, "q", fmt.Sprintf(`%s; yes "$(head -c 1000 /dev/zero | tr '\0' a)" | head -n 3000; touch %s; %s; echo after-space`, burst.wait(), burstDone, mended.wait()), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.c.Submit(bg, "q", "echo second", 0)
	if err != nil {
		t.Fatal(err)
	}
	burst.waiting(t)
	filler := fill(t, filepath.Dir(data))
	burst.open(t)
	testutil.WaitFor(t, 60*time.Second, "the burst printed into a full disk", func() bool { _, err := os.Stat(burstDone); return err == nil })
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mended.open(t)
	if e := waitTerminal(t, s.c, a.ID, 60*time.Second); e.Status != corral.StatusSucceeded || !strings.Contains(e.LogNote, "could not be written") {
		t.Fatalf("the run through the full disk: %s, log note %q", e.Status, e.LogNote)
	}
	var texts []string
	if _, err := s.c.Follow(bg, a.ID, 0, false, func(ev client.Event) error {
		if ev.Record != nil {
			texts = append(texts, ev.Record.Text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	log := strings.Join(texts, "\n")
	if i, j := strings.Index(log, "could not be written"), strings.Index(log, "after-space"); i < 0 || j < i || !strings.HasSuffix(log, "ended: succeeded") {
		t.Fatalf("the log does not note its loss then resume:\n%.2000s", log[max(0, len(log)-2000):])
	}
	if e := waitTerminal(t, s.c, b.ID, 60*time.Second); e.Status != corral.StatusSucceeded {
		t.Fatalf("the queued run: %s", e.Status)
	}
	settled(t, s.c, "q", 30*time.Second)
	testutil.WaitFor(t, 30*time.Second, "ready again", s.ready)
	s.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// TestFaultReadOnlyDataDirectory makes the data directory read-only under
// a running service (a read-only bind mount over it: every file opened
// from then on is refused, the database goes on through the files it
// has open): runs go on without their logs, are recorded with a note,
// the queue drains; a service started on a read-only data directory
// refuses to start, saying why.
func TestFaultReadOnlyDataDirectory(t *testing.T) {
	tag := testutil.Tag(t)
	if os.Geteuid() != 0 {
		t.Skip("SKIP: this fault-injection test needs root to bind-mount the data directory read-only")
	}
	data := t.TempDir()
	s := startServe(t, data, tag)
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	g := newGate(t)
	a, err := s.c.Submit(bg, "q", g.wait()+"; echo first", 0)
	if err != nil {
		t.Fatal(err)
	}
	g.waiting(t)
	readOnly(t, data)
	b, err := s.c.Submit(bg, "q", "echo second", 0)
	if err != nil {
		t.Fatal(err)
	}
	g.open(t)
	if e := waitTerminal(t, s.c, a.ID, 60*time.Second); e.Status != corral.StatusSucceeded || e.Stdout != "first\n" {
		t.Fatalf("the run that ended read-only: %s %q", e.Status, e.Stdout)
	}
	if e := waitTerminal(t, s.c, b.ID, 60*time.Second); e.Status != corral.StatusSucceeded || e.Stdout != "second\n" || !strings.Contains(e.LogNote, "no log") {
		t.Fatalf("the run started read-only: %s %q, note %q", e.Status, e.Stdout, e.LogNote)
	}
	settled(t, s.c, "q", 30*time.Second)
	s.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)

	again := &served{t: t, tag: tag}
	_, stderr, code := again.cli("serve", "--addr", "127.0.0.1:0", "--data", data)
	if code == 0 || !strings.Contains(stderr, "not writable") || !strings.Contains(stderr, "read-only file system") {
		t.Fatalf("start on a read-only data directory: exit %d, %q", code, stderr)
	}
}

// readOnly bind-mounts dir read-only over itself until the test ends.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("SKIP: cannot bind-mount (%v): this fault-injection test needs it", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount the bind read-only: %v", err)
	}
}

// TestFaultDatabaseLocked holds SQLite's write lock from another process
// (here, another connection) past the service's busy timeout while runs
// end.
func TestFaultDatabaseLocked(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	s := startServe(t, data, tag)
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
	g := newGate(t)
	var ids []string
	for i := range 4 {
		e, err := s.c.Submit(bg, "q", fmt.Sprintf("%s; echo %d", g.wait(), i), 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "corral.db")+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	g.open(t)
	testutil.WaitFor(t, 60*time.Second, "the worker reporting not ready", func() bool { return !s.ready() })
	// The fault lasts past the service's busy timeout (10 s): the ends
	// of the runs fail, and are tried again.
	time.Sleep(12 * time.Second)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for i, id := range ids {
		if e := waitTerminal(t, s.c, id, 90*time.Second); e.Status != corral.StatusSucceeded || e.Stdout != fmt.Sprintf("%d\n", i) {
			t.Fatalf("run %d: %s %q", i, e.Status, e.Stdout)
		}
	}
	settled(t, s.c, "q", 30*time.Second)
	testutil.WaitFor(t, 30*time.Second, "ready again", s.ready)
	s.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// TestFaultLogDirectoryUnwritable mounts a read-only file system over the
// log directory: tasks still run, their records say why they have no
// log, the queue does not drain into failures.
func TestFaultLogDirectoryUnwritable(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	s := startServe(t, data, tag)
	if os.Geteuid() != 0 {
		t.Skip("SKIP: this fault-injection test needs root to mount over the log directory")
	}
	logs := filepath.Join(data, "logs")
	if err := unix.Mount("tmpfs", logs, "tmpfs", unix.MS_RDONLY, "size=1m"); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs (%v): this fault-injection test needs it", err)
	}
	t.Cleanup(func() { unix.Unmount(logs, unix.MNT_DETACH) })
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
	var ids []string
	for i := range 6 {
		e, err := s.c.Submit(bg, "q", fmt.Sprintf("echo %d", i), 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for i, id := range ids {
		e := waitTerminal(t, s.c, id, 60*time.Second)
		if e.Status != corral.StatusSucceeded || e.Stdout != fmt.Sprintf("%d\n", i) || !strings.Contains(e.LogNote, "no log") {
			t.Fatalf("run %d without a log directory: %s %q, note %q", i, e.Status, e.Stdout, e.LogNote)
		}
	}
	settled(t, s.c, "q", 30*time.Second)
	s.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// loadRecorder submits tasks from many clients and keeps what the service
// accepted; every task appends its token to one file, so a task run
// twice shows.
type loadRecorder struct {
	mu       sync.Mutex
	accepted map[string]string // execution id -> token
	runs     string            // the file the tasks append to
}

func (l *loadRecorder) submit(c *client.Client, agent, token string) error {
	e, err := c.Submit(bg, agent, fmt.Sprintf("echo %s >> %s", token, l.runs), 0)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.accepted[e.ID] = token
	l.mu.Unlock()
	return nil
}

// check verifies the end state: every accepted task is recorded and
// ended, none ran twice, every succeeded one ran.
func (l *loadRecorder) check(t *testing.T, all []*client.Execution) {
	t.Helper()
	b, _ := os.ReadFile(l.runs)
	ran := map[string]int{}
	for _, line := range strings.Fields(string(b)) {
		ran[line]++
	}
	recorded := map[string]*client.Execution{}
	for _, e := range all {
		recorded[e.ID] = e
	}
	byStatus := map[corral.Status]int{}
	for id, token := range l.accepted {
		e := recorded[id]
		if e == nil {
			t.Fatalf("accepted task %s lost", id)
		}
		byStatus[e.Status]++
		if e.Status == corral.StatusSucceeded && ran[token] != 1 {
			t.Fatalf("task %s succeeded but ran %d times", id, ran[token])
		}
	}
	for token, n := range ran {
		if n > 1 {
			t.Fatalf("task %s ran %d times", token, n)
		}
	}
	t.Logf("%d accepted (%d recorded): %v", len(l.accepted), len(all), byStatus)
}

// TestFaultKill9DuringA2000TaskLoad kills the service with SIGKILL at
// random points while 20 clients submit 2,000 tasks to an agent with 4
// slots, restarting it each time.
func TestFaultKill9DuringA2000TaskLoad(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	s := startServe(t, data, tag)
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 4, Overflow: corral.OverflowQueue, MaxBacklog: 2000})
	l := &loadRecorder{accepted: map[string]string{}, runs: filepath.Join(t.TempDir(), "runs")}
	var cur atomic.Pointer[served]
	cur.Store(s)
	var maxSlots atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the service's account of its slots, throughout
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, slots, err := cur.Load().c.Slots(bg, "q"); err == nil && int64(len(slots)) > maxSlots.Load() {
				maxSlots.Store(int64(len(slots)))
			}
		}
	}()
	var sent atomic.Int64
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				token := fmt.Sprintf("t%02d-%03d", i, j)
				// A submission refused because the service is down is sent
				// again; one whose answer was lost is not (it may have been
				// accepted, and then its record shows).
				for {
					err := l.submit(cur.Load().c, "q", token)
					if err == nil || !isRefused(err) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				sent.Add(1)
			}
		}()
	}
	for k := range 2 {
		testutil.WaitFor(t, 5*time.Minute, "more tasks sent", func() bool { return sent.Load() >= int64(300+700*k) })
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
		cur.Load().kill9()
		cur.Store(startServe(t, data, tag))
	}
	testutil.WaitFor(t, 5*time.Minute, "all 2,000 tasks sent", func() bool { return sent.Load() == 2000 })
	all := settled(t, cur.Load().c, "q", 10*time.Minute)
	close(stop)
	wg.Wait()
	if m := maxSlots.Load(); m > 4 {
		t.Fatalf("%d slots held at once, capacity 4", m)
	}
	l.check(t, all)
	cur.Load().stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// isRefused reports whether a submission failed before reaching the
// service (connection refused).
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// TestFaultSIGSTOPOfTheWorker freezes the service with SIGSTOP for longer
// than its lease while tasks run and wait: once it is continued it stops
// the runs it can no longer vouch for (fencing), records them, and
// drains the queue; nothing is lost or run twice.
func TestFaultSIGSTOPOfTheWorker(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag, "--lease", "4s")
	createAgent(t, s.c, &client.Agent{Name: "q", MaxParallelTasks: 2, Overflow: corral.OverflowQueue, MaxBacklog: 100})
	l := &loadRecorder{accepted: map[string]string{}, runs: filepath.Join(t.TempDir(), "runs")}
	for i := range 40 {
		if err := l.submit(s.c, "q", fmt.Sprintf("t%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 60*time.Second, "some runs done", func() bool {
		b, _ := os.ReadFile(l.runs)
		return len(strings.Fields(string(b))) >= 5
	})
	if err := syscall.Kill(s.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // past the lease
	if err := syscall.Kill(s.pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	all := settled(t, s.c, "q", 3*time.Minute)
	l.check(t, all)
	s.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}
