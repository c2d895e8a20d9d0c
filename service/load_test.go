package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/storetest"
)

// flakyStore is a store whose writes of terminal states and heartbeats
// fail while broken is set, as a full disk or a locked database makes
// them fail.
type flakyStore struct {
	store.Store
	broken atomic.Bool
}

var errDiskFull = errors.New("database or disk is full (SQLITE_FULL)")

func (s *flakyStore) Finish(ctx context.Context, id string, o *corral.Outcome, next *store.NextAttempt) (*corral.Execution, bool, error) {
	if s.broken.Load() {
		return nil, false, errDiskFull
	}
	return s.Store.Finish(ctx, id, o, next)
}

func (s *flakyStore) Heartbeat(ctx context.Context, workerID string, now time.Time) error {
	if s.broken.Load() {
		return errDiskFull
	}
	return s.Store.Heartbeat(ctx, workerID, now)
}

// newFlaky starts a worker on a flakyStore over a fresh SQLite database.
func newFlaky(t *testing.T, cfg service.Config) (*fixture, *flakyStore) {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	dir := t.TempDir()
	_, open := storetest.Backends()[0].Fresh(t, dir)
	fs := &flakyStore{Store: open()}
	cfg.Store, cfg.DataDir = fs, dir
	cfg.Env = append(cfg.Env, testutil.TagEnvVar(tag))
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(bg); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, svc: svc, st: fs, dir: dir, tag: tag}, fs
}

// waitEnded waits until execution id's log holds its "ended" record:
// its process tree is gone.
func (f *fixture) waitEnded(id string) {
	f.t.Helper()
	testutil.WaitFor(f.t, 30*time.Second, "the run of "+id+" ending", func() bool {
		ended := false
		f.svc.Replay(bg, id, 0, func(_ int, raw []byte) error {
			var rec service.LogRecord
			json.Unmarshal(raw, &rec)
			ended = ended || rec.Stream == "system" && strings.HasPrefix(rec.Text, "ended:")
			return nil
		})
		return ended
	})
}

// TestRunEndIsRecordedOnceTheStoreTakesWritesAgain: a run that ends while
// the store refuses its terminal state keeps trying; meanwhile the worker
// says it is not ready, starts nothing new, lets the run be cancelled;
// once writes work again the end is recorded, the slot freed, the queue
// moves, without a restart.
func TestRunEndIsRecordedOnceTheStoreTakesWritesAgain(t *testing.T) {
	f, fs := newFlaky(t, service.Config{Heartbeat: 100 * time.Millisecond, Lease: time.Hour})
	defer func() {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		if err := f.svc.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		testutil.AssertNoTagged(t, f.tag, 5*time.Second)
	}()
	f.agent(corral.Agent{Name: "q", MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	fs.broken.Store(true)
	a := f.submit("q", "echo first")
	b := f.submit("q", "echo second")
	f.waitEnded(a.ID)
	testutil.WaitFor(t, 10*time.Second, "the worker reporting not ready", func() bool {
		err := f.svc.Ready(bg)
		return err != nil && strings.Contains(err.Error(), "not recorded")
	})
	if e := f.get(a.ID); e.Status != corral.StatusRunning {
		t.Fatalf("run whose end could not be written: %s", e.Status)
	}
	if _, err := f.svc.Cancel(bg, a.ID); err != nil {
		t.Fatalf("cancel of a run whose end is unrecorded: %v", err)
	}
	if e := f.get(b.ID); e.Status != corral.StatusQueued {
		t.Fatalf("queued run moved while the slot is held: %s", e.Status)
	}
	fs.broken.Store(false)
	// The run had ended by itself before the cancel: its own end stands.
	if e := f.waitTerminal(a.ID, 30*time.Second); e.Status != corral.StatusSucceeded || e.Stdout != "first\n" {
		t.Fatalf("recorded end: %s %q", e.Status, e.Stdout)
	}
	if e := f.waitTerminal(b.ID, 30*time.Second); e.Status != corral.StatusSucceeded {
		t.Fatalf("queued run after: %s", e.Status)
	}
	if sl, _ := f.svc.Slots(bg, "q"); len(sl) != 0 {
		t.Fatalf("slots held at the end: %v", sl)
	}
	testutil.WaitFor(t, 10*time.Second, "ready again", func() bool { return f.svc.Ready(bg) == nil })
}

// TestCloseKeepsTheWorkerWhileARunsEndIsUnrecorded: a worker that must
// stop before the store takes a run's end leaves its worker record, so
// that its next start recovers the run.
func TestCloseKeepsTheWorkerWhileARunsEndIsUnrecorded(t *testing.T) {
	f, fs := newFlaky(t, service.Config{WorkerID: "first", Heartbeat: 100 * time.Millisecond})
	f.agent(corral.Agent{Name: "k", MaxParallelTasks: 1})
	fs.broken.Store(true)
	e := f.submit("k", "echo bye")
	f.waitEnded(e.ID)
	ctx, cancel := context.WithTimeout(bg, 3*time.Second)
	err := f.svc.Close(ctx)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "could not be recorded") {
		t.Fatalf("close with an unrecorded end: %v", err)
	}
	testutil.AssertNoTagged(t, f.tag, 5*time.Second)
	fs.broken.Store(false)
	ws, _ := fs.Workers(bg)
	if len(ws) != 1 || ws[0].ID != "first" {
		t.Fatalf("workers after close: %+v", ws)
	}
	// The process stops (here: its record now names a process that has
	// exited) and starts again.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ws[0].Pid = dead.Process.Pid
	if err := fs.RegisterWorker(bg, ws[0]); err != nil {
		t.Fatal(err)
	}
	again, err := service.New(service.Config{Store: fs, DataDir: f.dir, WorkerID: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(bg); err != nil {
		t.Fatal(err)
	}
	defer again.Close(bg)
	if got, _ := again.Execution(bg, e.ID); got.Status != corral.StatusInterrupted || !strings.Contains(got.Stdout, "bye") {
		t.Fatalf("after the restart: %s %q", got.Status, got.Stdout)
	}
	if sl, _ := again.Slots(bg, "k"); len(sl) != 0 {
		t.Fatalf("slot still held: %v", sl)
	}
}

// TestStoredOutputNeverExceedsMaxOutput: the record keeps at most
// max_output bytes of each stream, head and tail, valid UTF-8, whatever
// the run prints; the log has it all.
func TestStoredOutputNeverExceedsMaxOutput(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{})
	f.agent(corral.Agent{Name: "small", MaxOutput: 1000})
	f.agent(corral.Agent{Name: "dflt"})
	for _, c := range []struct {
		agent, cmd string
		max        int
		bytes      int64
	}{
		{"small", `yes "$(printf 'é%.0s' $(seq 1000))" | head -c 300000`, 1000, 300000},
		{"small", `yes "$(printf 'x%.0s' $(seq 1000))" | head -c 300000 >&2`, 1000, 300000},
		{"dflt", `yes "$(printf 'éa%.0s' $(seq 1000))" | head -c 300000`, service.DefaultMaxOutput, 300000},
	} {
		e := f.waitTerminal(f.submit(c.agent, c.cmd).ID, 60*time.Second)
		out, n := e.Stdout, e.StdoutBytes
		if strings.Contains(c.cmd, ">&2") {
			out, n = e.Stderr, e.StderrBytes
		}
		// (The count is the whole stream's, but for what the supervision
		// core's drain may cut after the command exited on a loaded
		// machine.)
		if len(out) > c.max || len(out) < c.max/2 || !utf8.ValidString(out) || !e.OutputTruncated || n < int64(c.max)*2 || n > c.bytes {
			t.Errorf("%s: kept %d bytes (max %d, valid %v, truncated %v), counted %d", c.cmd, len(out), c.max, utf8.ValidString(out), e.OutputTruncated, n)
		}
		if !strings.Contains(out, "bytes cut here") {
			t.Errorf("%s: no note of the cut in %q…", c.cmd, out[:min(len(out), 200)])
		}
	}
}

// TestFinishedLogReplaysWholeWithItsEnd: a stored log of many reads
// replays every record, then the run's end.
func TestFinishedLogReplaysWholeWithItsEnd(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{})
	f.agent(corral.Agent{Name: "big"})
	const lines = 40 // 800 KB of records, a dozen reads, each record a third of one
	e := f.waitTerminal(f.submit("big", `yes "$(head -c 20000 /dev/zero | tr '\0' x)" | head -n 40`).ID, 120*time.Second)
	n, last, prev := 0, "", 0
	end, err := f.svc.Follow(bg, e.ID, 0, func(seq int, raw []byte) error {
		var rec service.LogRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		if seq != prev+1 {
			t.Fatalf("record %d after %d", seq, prev)
		}
		prev = seq
		if rec.Stream == "stdout" {
			n++
		}
		last = rec.Text
		return nil
	})
	if err != nil || end.Status != corral.StatusSucceeded {
		t.Fatalf("follow: %v %+v", err, end)
	}
	if n != lines || last != "ended: succeeded" {
		t.Fatalf("replayed %d of %d lines, last record %q", n, lines, last)
	}
}

// TestUnwritableLogDirectoryStillRunsTasks: without a log the tasks run,
// their record saying why there is no log; the queue does not drain into
// failures.
func TestUnwritableLogDirectoryStillRunsTasks(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{})
	f.agent(corral.Agent{Name: "nolog", MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	logs := filepath.Join(f.dir, "logs")
	if err := os.RemoveAll(logs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logs, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		ids = append(ids, f.submit("nolog", "echo still here").ID)
	}
	for _, id := range ids {
		e := f.waitTerminal(id, 30*time.Second)
		if e.Status != corral.StatusSucceeded || e.Stdout != "still here\n" || !strings.HasPrefix(e.LogNote, "no log:") {
			t.Fatalf("run without a log directory: %s %q note %q", e.Status, e.Stdout, e.LogNote)
		}
	}
}

// TestRetentionDeletesOldRecordsAndTheirLogs keeps the newest three
// finished executions and their logs.
func TestRetentionDeletesOldRecordsAndTheirLogs(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{RetainCount: 3, SweepInterval: 100 * time.Millisecond})
	f.agent(corral.Agent{Name: "r", MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	var ids []string
	for range 6 {
		e := f.submit("r", "echo kept")
		f.waitTerminal(e.ID, 30*time.Second)
		ids = append(ids, e.ID)
	}
	// A sweep deletes a batch's records, then their logs: wait for both.
	testutil.WaitFor(t, 30*time.Second, "the oldest three deleted with their logs", func() bool {
		for _, id := range ids[:3] {
			_, err := f.svc.Execution(bg, id)
			_, ferr := os.Stat(filepath.Join(f.dir, "logs", id+".jsonl"))
			if !errors.Is(err, service.ErrNotFound) || !os.IsNotExist(ferr) {
				return false
			}
		}
		return true
	})
	for i, id := range ids {
		_, err := f.svc.Execution(bg, id)
		_, ferr := os.Stat(filepath.Join(f.dir, "logs", id+".jsonl"))
		if gone := i < 3; gone != errors.Is(err, service.ErrNotFound) || gone != os.IsNotExist(ferr) {
			t.Fatalf("execution %d: record %v, log %v", i, err, ferr)
		}
	}
}

// TestSchedulesFireNoFasterThanAllowed refuses zero, negative and too
// short intervals, and too many schedules.
func TestSchedulesFireNoFasterThanAllowed(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{MinScheduleInterval: time.Minute})
	f.agent(corral.Agent{Name: "c"})
	for _, cron := range []string{"@every 0s", "@every -5s", "@every 30s", "* * * * * *", "0,30 * * * * *"} {
		if _, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "c", Cron: cron, Input: "x", Enabled: true}); !errors.Is(err, service.ErrInvalid) {
			t.Errorf("cron %q: %v", cron, err)
		}
	}
	for _, cron := range []string{"@every 1m", "*/5 * * * *", "@hourly"} {
		if _, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "c", Cron: cron, Input: "x", Enabled: true}); err != nil {
			t.Errorf("cron %q: %v", cron, err)
		}
	}
}
